// Transfers matched per second against one million watched addresses (synthetic logs), and
// receive-branch derivation speed. Pure CPU: no database, no chain. `npm run bench`.
import { randomBytes } from 'node:crypto';
import { WatchSet } from '../rails/chain/watch-set.js';
import { deriveAddress } from '../domain/hd/derive.js';

const hex20 = () => `0x${randomBytes(20).toString('hex')}`;

export function benchMatch(watched = 1_000_000, logs = 1_000_000, hitRate = 0.01) {
  const set = new WatchSet('evm', 'live');
  const addresses: string[] = [];
  for (let i = 0; i < watched; i++) {
    const a = hex20();
    addresses.push(a);
    set.addForTest(a, { kind: 'payment_link', id: `pl_${i}`, storeId: 's' });
  }
  // Logs carry checksummed-or-lowercase addresses as nodes return them; matching normalises.
  const stream: string[] = [];
  for (let i = 0; i < logs; i++) stream.push(Math.random() < hitRate ? addresses[(Math.random() * watched) | 0]!.toUpperCase().replace('0X', '0x') : hex20());
  const now = Date.now();
  const t0 = process.hrtime.bigint();
  let hits = 0;
  for (const to of stream) if (set.match(to, now)) hits++;
  const seconds = Number(process.hrtime.bigint() - t0) / 1e9;
  return { watched, logs, hits, matchedPerSecond: Math.round(logs / seconds), heapMiB: Math.round(process.memoryUsage().heapUsed / 2 ** 20) };
}

export function benchDerive(count = 5_000) {
  const xpub = 'xpub6Ce9NcJvTk36xtLSrJLZqE7wtgA5deCeYs7rSQtreh4cj6ByPtrg9sD7V2FNFLPnf8heNP3FGkeV9qwfzvZNSd54JoNXVsXFYSYwHsnJxqP';
  deriveAddress(xpub, 'evm', 0, 0);
  const t0 = process.hrtime.bigint();
  for (let i = 1; i <= count; i++) deriveAddress(xpub, 'evm', 0, i);
  const seconds = Number(process.hrtime.bigint() - t0) / 1e9;
  return { count, addressesPerSecond: Math.round(count / seconds), microsPerAddress: Math.round((seconds / count) * 1e6) };
}
