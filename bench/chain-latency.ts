// Time from a block reaching the confirmation depth to the payment link reading CONFIRMED, on a
// real local chain (anvil) with the real watcher, workflow and PostgreSQL. Also the time from a
// transfer being mined to the link reading PROCESSING.
import type { Address } from 'viem';
import { deployTestToken, startAnvil } from '../test/helpers/anvil.js';
import { connectAllRails } from '../test/helpers/fixtures.js';
import { startStack } from '../test/helpers/stack.js';
import { startTestTemporal, stopTestTemporal } from '../test/helpers/temporal-server.js';

async function waitFor(check: () => Promise<boolean>): Promise<number> {
  for (;;) {
    if (await check()) return performance.now();
    await new Promise((r) => setTimeout(r, 10));
  }
}

export async function benchChainLatency(rounds = 5, pollMs = [100, 1000]) {
  await startTestTemporal();
  const anvil = await startAnvil();
  const usdt = await deployTestToken(anvil, { decimals: 18 });
  await usdt.mint(anvil.accounts[1]!, 10n ** 30n);
  const results: Record<string, unknown> = {};
  try {
    for (const poll of pollMs) {
      const stack = await startStack({
        CHAIN_WATCHERS: 'on', CHAIN_POLL_MS: String(poll), RPC_URL_USDT_BSC_TEST: anvil.url,
        USDT_CONTRACT_USDT_BSC_TEST: usdt.address, CONFIRMATIONS_USDT_BSC: '3',
      });
      const store = await stack.createStore('Bench');
      await connectAllRails(stack, store.clientId);
      const key = store.keys.test.secretKey;
      const seenMs: number[] = [];
      const confirmMs: number[] = [];
      for (let i = 0; i < rounds; i++) {
        const link = (await stack.request({ method: 'POST', url: '/v1/payment-links', key, payload: { usdtAmount: '1', enabledRails: ['USDT_BSC'] } })).body;
        const status = async (s: string) => (await stack.request({ method: 'GET', url: `/v1/payment-links/${link.id}`, key })).body.status === s;
        await new Promise((r) => setTimeout(r, 300));
        await usdt.transfer(anvil.accounts[1]!, link.bscAddress as Address, 10n ** 18n);
        const mined = performance.now();
        seenMs.push((await waitFor(() => status('PROCESSING'))) - mined);
        await anvil.rpc('anvil_mine', ['0x2']);
        const atDepth = performance.now();
        confirmMs.push((await waitFor(() => status('CONFIRMED'))) - atDepth);
      }
      const median = (a: number[]) => Math.round([...a].sort((x, y) => x - y)[a.length >> 1]!);
      results[`poll${poll}ms`] = { rounds, minedToProcessingMedianMs: median(seenMs), depthToConfirmedMedianMs: median(confirmMs), depthToConfirmedMaxMs: Math.round(Math.max(...confirmMs)) };
      console.error(`chain poll ${poll} ms:`, JSON.stringify(results[`poll${poll}ms`]));
      await stack.stop();
    }
  } finally {
    await anvil.stop();
    await stopTestTemporal();
  }
  return results;
}
