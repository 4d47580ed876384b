#!/usr/bin/env node
// The `malipo` command: loads the TypeScript sources through tsx and hands over to the CLI.
import { register } from 'tsx/esm/api';

register();
const { main } = await import('../runtime/cli.ts');
await main(process.argv.slice(2));
