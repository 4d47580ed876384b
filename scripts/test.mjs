#!/usr/bin/env node
// `npm test`: makes sure the pinned Temporal CLI exists (downloading or building it once if needed),
// then runs jest as native ESM. Extra arguments go to jest (e.g. `npm test -- test/unit`).
import { spawnSync } from 'node:child_process';

const setup = spawnSync(process.execPath, ['bin/run-ts.mjs', 'scripts/ensure-temporal.ts'], { stdio: ['ignore', 'pipe', 'inherit'] });
if (setup.status !== 0) process.exit(setup.status ?? 1);
const cliPath = setup.stdout.toString().trim();
const result = spawnSync(process.execPath, ['node_modules/jest/bin/jest.js', ...process.argv.slice(2)], {
  stdio: 'inherit',
  env: {
    ...process.env,
    TEMPORAL_CLI_PATH: process.env.TEMPORAL_CLI_PATH ?? cliPath,
    NODE_OPTIONS: `${process.env.NODE_OPTIONS ?? ''} --experimental-vm-modules --no-warnings`.trim(),
  },
});
process.exit(result.status ?? 1);
