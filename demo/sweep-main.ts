// `npm run demo:sweep -- [--rail USDT_BSC] [--data-dir DIR]`: sweeps the demo's paid USDT to the owner's destination, signed offline.
import { demoSweep } from './sweep.js';

const args = process.argv.slice(2);
const flag = (name: string) => {
  const at = args.indexOf(name);
  return at >= 0 ? args[at + 1] : undefined;
};
try {
  await demoSweep({ rail: flag('--rail'), dataDir: flag('--data-dir') });
} catch (err) {
  console.error((err as Error).message);
  process.exit(1);
}
