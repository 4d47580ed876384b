// `npm run emulator:daraja -- [--port N] [--host H] [--complete-after-ms MS]`: a local Daraja for offline trials.
import { runDarajaEmulator } from './cli.js';

const args = process.argv.slice(2);
const flag = (name: string) => {
  const at = args.indexOf(name);
  return at >= 0 ? args[at + 1] : undefined;
};
await runDarajaEmulator({
  port: Number(flag('--port') ?? 8089),
  host: flag('--host') ?? '127.0.0.1',
  autoCompleteMs: Number(flag('--complete-after-ms') ?? 5000),
});
