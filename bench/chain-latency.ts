// Time from a block reaching the confirmation depth to the payment link reading CONFIRMED, on a
// real local chain (anvil) with the real watcher, workflow and PostgreSQL. Also the time from a
// transfer being mined to the link reading PROCESSING.
//
// The state is polled from the database every 10 ms, never through the API: a route polled that
// often from one address meets its rate limit, and a 429 read as "not yet" once made this bench
// report a client waiting out Retry-After (53 s) as the watcher's latency. Each confirmation is
// also timed by the database's own clock (payment_links.confirmed_at against the wall clock when
// the depth block was mined; one machine, one clock), and the API is asked once per round at the
// end, where any non-2xx answer ends the bench (bench/guard.ts).
import type { Address } from 'viem';
import { sql } from 'slonik';
import { z } from 'zod';
import { deployTestToken, startAnvil } from '../test/helpers/anvil.js';
import { connectAllRails } from '../test/helpers/fixtures.js';
import { startStack, type Stack } from '../test/helpers/stack.js';
import { startTestTemporal, stopTestTemporal } from '../test/helpers/temporal-server.js';
import { expectOk } from './guard.js';

const linkRow = z.object({ status: z.string(), confirmed_ms: z.number().nullable() });

/** The link's status and its confirmed_at (epoch ms), read from the database. */
const readLink = (stack: Stack, id: string) =>
  stack.pool.one(sql.type(linkRow)`
    SELECT status, (extract(epoch FROM confirmed_at) * 1000)::float8 AS confirmed_ms FROM payment_links WHERE id = ${id}`);

async function waitFor(check: () => Promise<boolean>, what: string, limitMs = 60_000): Promise<number> {
  const started = performance.now();
  for (;;) {
    if (await check()) return performance.now();
    if (performance.now() - started > limitMs) throw new Error(`chain: ${what} not reached within ${limitMs} ms`);
    await new Promise((r) => setTimeout(r, 10));
  }
}

const median = (a: number[]) => Math.round([...a].sort((x, y) => x - y)[a.length >> 1]!);
const max = (a: number[]) => Math.round(Math.max(...a));

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
      try {
        const store = await stack.createStore('Bench');
        await connectAllRails(stack, store.clientId);
        const key = store.keys.test.secretKey;
        const seenMs: number[] = [];
        const confirmMs: number[] = [];
        const confirmDbMs: number[] = [];
        for (let i = 0; i < rounds; i++) {
          const created = await stack.request({ method: 'POST', url: '/v1/payment-links', key, payload: { usdtAmount: '1', enabledRails: ['USDT_BSC'] } });
          expectOk('chain: POST /v1/payment-links', created);
          const link = created.body;
          const is = (s: string) => async () => (await readLink(stack, link.id)).status === s;
          await new Promise((r) => setTimeout(r, 300));
          await usdt.transfer(anvil.accounts[1]!, link.bscAddress as Address, 10n ** 18n);
          const mined = performance.now();
          seenMs.push((await waitFor(is('PROCESSING'), `${link.id} PROCESSING`)) - mined);
          await anvil.rpc('anvil_mine', ['0x2']);
          const atDepth = performance.now();
          const atDepthWall = Date.now();
          confirmMs.push((await waitFor(is('CONFIRMED'), `${link.id} CONFIRMED`)) - atDepth);
          const { confirmed_ms } = await readLink(stack, link.id);
          if (confirmed_ms === null) throw new Error(`chain: ${link.id} is CONFIRMED with no confirmed_at`);
          confirmDbMs.push(confirmed_ms - atDepthWall);
          // The API agrees, asked once (far inside its rate limit); any other answer ends the bench.
          const read = await stack.request({ method: 'GET', url: `/v1/payment-links/${link.id}`, key });
          expectOk(`chain: GET /v1/payment-links/${link.id}`, read);
          if (read.body.status !== 'CONFIRMED') throw new Error(`chain: the database says CONFIRMED, the API ${read.body.status}`);
        }
        results[`poll${poll}ms`] = {
          rounds,
          minedToProcessingMedianMs: median(seenMs), minedToProcessingMaxMs: max(seenMs),
          depthToConfirmedMedianMs: median(confirmMs), depthToConfirmedMaxMs: max(confirmMs),
          // The same, by the database's confirmed_at: within the 10 ms poll of the figures above.
          depthToConfirmedAtMedianMs: median(confirmDbMs), depthToConfirmedAtMaxMs: max(confirmDbMs),
        };
        console.error(`chain poll ${poll} ms:`, JSON.stringify(results[`poll${poll}ms`]));
      } finally {
        await stack.stop();
      }
    }
  } finally {
    await anvil.stop();
    await stopTestTemporal();
  }
  return results;
}
