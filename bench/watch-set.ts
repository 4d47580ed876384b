// What watching derived receive addresses costs after a derive at a high index, measured side by
// side in one run: today's watch set (rows the derive request wrote, read from PostgreSQL) against
// the previous design (derive every address 0 … highest + 20 in the watcher), whose cost is
// measured on a smaller range and scaled by the number of addresses it would derive.
import { performance } from 'node:perf_hooks';
import { WatchSet } from '../rails/chain/watch-set.js';
import { receiveBranch } from '../domain/hd/derive.js';
import { deriveAddress } from '../rails/chain/derive-address.js';
import { connectAllRails } from '../test/helpers/fixtures.js';
import { startStack } from '../test/helpers/stack.js';
import { startTestTemporal, stopTestTemporal } from '../test/helpers/temporal-server.js';

const round = (n: number) => Math.round(n * 10) / 10;

export async function benchWatchSet() {
  await startTestTemporal();
  const stack = await startStack();
  try {
    const store = await stack.createStore('Watch bench');
    const { evm } = await connectAllRails(stack, store.clientId, 'test');
    const key = store.keys.test.secretKey;
    const results: Record<string, unknown>[] = [];
    for (const index of [2_000, 1_000_000, 2_147_483_647]) {
      const t0 = performance.now();
      const res = await stack.request({ method: 'POST', url: '/v1/wallets/derive', key, payload: { index } });
      if (res.status !== 200) throw new Error(`derive ${index}: ${res.status} ${res.text}`);
      const deriveMs = performance.now() - t0;
      const set = new WatchSet('evm', 'test');
      const t1 = performance.now();
      await set.refresh(stack.pool, Date.now());
      const loadMs = performance.now() - t1;
      results.push({ index, deriveRequestMs: round(deriveMs), watchSetFullLoadMs: round(loadMs), watched: set.size });
    }
    // The previous design: the watcher derived 0 … highest + 20 at every full reload and restart.
    const sample = 5_000;
    const t2 = performance.now();
    for (let i = 0; i < sample; i++) deriveAddress(evm, 'evm', receiveBranch, i);
    const perAddressMs = (performance.now() - t2) / sample;
    for (const r of results) {
      const addresses = Number(r.index) + 21;
      r.previousDesignLoadSeconds = round((addresses * perAddressMs) / 1000);
      r.previousDesignAddresses = addresses;
    }
    return { perAddressMicros: Math.round(perAddressMs * 1000), results };
  } finally {
    await stack.stop();
    await stopTestTemporal();
  }
}
