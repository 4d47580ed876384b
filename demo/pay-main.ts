// `npm run demo:pay -- <linkId> [--rail USDT_BSC] [--data-dir DIR]`: pays a demo link in USDT on the demo chain.
// `npm run demo:pay -- --paybill <linkId> [--data-dir DIR]`: pays it from the "M-Pesa menu" (the Daraja emulator's C2B simulate).
import { demoPay, demoPayPaybill } from './pay.js';

const args = process.argv.slice(2);
const flag = (name: string) => {
  const at = args.indexOf(name);
  return at >= 0 ? args[at + 1] : undefined;
};
const paybill = flag('--paybill');
const linkId = paybill ?? args.find((a, i) => !a.startsWith('--') && !args[i - 1]?.startsWith('--'));
if (!linkId) {
  console.error('demo:pay needs the link id, e.g. npm run demo:pay -- pl_…');
  process.exit(2);
}
try {
  if (paybill) await demoPayPaybill(linkId, { dataDir: flag('--data-dir') });
  else await demoPay(linkId, { rail: flag('--rail'), dataDir: flag('--data-dir') });
} catch (err) {
  console.error((err as Error).message);
  process.exit(1);
}
