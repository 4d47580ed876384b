// End-to-end latency of an on-chain payment, on the embedded default with the real watcher,
// workflow, PostgreSQL and webhook delivery, for an EVM rail (anvil) and for TRON (the TronGrid
// emulator, whose blocks this bench mines):
//   mined → PROCESSING          the transfer's block is mined; the link reads PROCESSING
//   block at depth → CONFIRMED  the block that gives the confirmation depth is mined (EVM), or the
//                               transfer's block is solidified (TRON); the link reads CONFIRMED
//   block at depth → webhook    the same start; the signed `payment_link.confirmed` webhook
//                               arrives at a local receiver
// p50 and p99 over `rounds` rounds (20 by default) at each poll interval.
//
// The state is polled from the database every 10 ms, never through the API: a route polled that
// often from one address meets its rate limit, and a 429 read as "not yet" once made this bench
// report a client waiting out Retry-After (53 s) as the watcher's latency. Each confirmation is
// also timed by the database's own clock (payment_links.confirmed_at against the wall clock when
// the depth block was mined; one machine, one clock), and the API is asked once per round at the
// end, where any non-2xx answer ends the bench (bench/guard.ts).
import { randomBytes } from 'node:crypto';
import type { Address } from 'viem';
import { sql } from 'slonik';
import { z } from 'zod';
import { startTronGridEmulator } from '../emulators/trongrid/server.js';
import { solidifyLag } from '../emulators/trongrid/jsonrpc.js';
import { tronAddressFromBytes } from '../rails/tron/address.js';
import { deployTestToken, startAnvil } from '../test/helpers/anvil.js';
import { connectAllRails } from '../test/helpers/fixtures.js';
import { startStack, type Stack } from '../test/helpers/stack.js';
import { startTestTemporal, stopTestTemporal } from '../test/helpers/temporal-server.js';
import { WebhookReceiver } from '../test/helpers/webhook-receiver.js';
import { expectOk } from './guard.js';

const linkRow = z.object({ status: z.string(), confirmed_ms: z.number().nullable() });

/** The link's status and its confirmed_at (epoch ms), read from the database. */
const readLink = (stack: Stack, id: string) =>
  stack.pool.one(sql.type(linkRow)`
    SELECT status, (extract(epoch FROM confirmed_at) * 1000)::float8 AS confirmed_ms FROM payment_links WHERE id = ${id}`);

async function waitFor(check: () => Promise<boolean> | boolean, what: string, limitMs = 60_000): Promise<number> {
  const started = performance.now();
  for (;;) {
    if (await check()) return performance.now();
    if (performance.now() - started > limitMs) throw new Error(`chain: ${what} not reached within ${limitMs} ms`);
    await new Promise((r) => setTimeout(r, 10));
  }
}

/** The nearest-rank percentile (p in 0..100) of a non-empty sample, rounded to the millisecond. */
export function percentile(sample: readonly number[], p: number): number {
  const sorted = [...sample].sort((x, y) => x - y);
  const rank = Math.min(sorted.length, Math.max(1, Math.ceil((p / 100) * sorted.length)));
  return Math.round(sorted[rank - 1]!);
}

/** What one rail needs from the bench: its stack settings, a link's address, a payment, and the block(s) that give it depth. */
interface ChainUnderTest {
  rail: 'USDT_BSC' | 'USDT_TRON';
  env: Record<string, string>;
  addressOf(link: Record<string, unknown>): string;
  pay(to: string): Promise<void>;
  reachDepth(): Promise<void>;
  stop(): Promise<void>;
}

async function evmChain(): Promise<ChainUnderTest> {
  const anvil = await startAnvil();
  const usdt = await deployTestToken(anvil, { decimals: 18 });
  await usdt.mint(anvil.accounts[1]!, 10n ** 30n);
  return {
    rail: 'USDT_BSC',
    env: { RPC_URL_USDT_BSC_TEST: anvil.url, USDT_CONTRACT_USDT_BSC_TEST: usdt.address, CONFIRMATIONS_USDT_BSC: '3' },
    addressOf: (link) => link.bscAddress as string,
    pay: async (to) => void (await usdt.transfer(anvil.accounts[1]!, to as Address, 10n ** 18n)),
    reachDepth: async () => void (await anvil.rpc('anvil_mine', ['0x2'])),
    stop: () => anvil.stop(),
  };
}

async function tronChain(): Promise<ChainUnderTest> {
  const tron = await startTronGridEmulator();
  tron.chain.finalizedTag = false;
  const contract = tronAddressFromBytes(randomBytes(20));
  const payer = tronAddressFromBytes(randomBytes(20));
  return {
    rail: 'USDT_TRON',
    env: { RPC_URL_USDT_TRON_TEST: tron.url, USDT_CONTRACT_USDT_TRON_TEST: contract },
    addressOf: (link) => link.tronAddress as string,
    pay: async (to) => void tron.chain.mine(1, [{ contract, from: payer, to, amount: 1_000_000n }]),
    reachDepth: async () => void tron.chain.mine(solidifyLag),
    stop: () => tron.close(),
  };
}

export async function benchChainLatency(rounds = 20, pollMs = [1000, 100]) {
  await startTestTemporal();
  const receiver = await WebhookReceiver.start();
  const results: Record<string, unknown> = {};
  try {
    for (const make of [evmChain, tronChain]) {
      const chain = await make();
      try {
        for (const poll of pollMs) {
          const stack = await startStack({ CHAIN_WATCHERS: 'on', CHAIN_POLL_MS: String(poll), WEBHOOK_TEST_ALLOWED_NETWORKS: 'loopback', ...chain.env });
          try {
            const store = await stack.createStore('Bench');
            await connectAllRails(stack, store.clientId);
            const key = store.keys.test.secretKey;
            const hookPath = `/${chain.rail}/${poll}`;
            expectOk('chain: POST /v1/webhook-endpoints', await stack.request({
              method: 'POST', url: '/v1/webhook-endpoints', key, payload: { url: receiver.url(hookPath), enabledEvents: ['payment_link.confirmed'] },
            }));
            const seenMs: number[] = [];
            const confirmMs: number[] = [];
            const confirmDbMs: number[] = [];
            const webhookMs: number[] = [];
            for (let i = 0; i < rounds; i++) {
              const created = await stack.request({ method: 'POST', url: '/v1/payment-links', key, payload: { usdtAmount: '1', enabledRails: [chain.rail] } });
              expectOk('chain: POST /v1/payment-links', created);
              const link = created.body as Record<string, unknown> & { id: string };
              const is = (s: string) => async () => (await readLink(stack, link.id)).status === s;
              // The link's address joins the watch set (within a poll); the deposit lands after that.
              await new Promise((r) => setTimeout(r, Math.max(300, poll + 100)));
              await chain.pay(chain.addressOf(link));
              const mined = performance.now();
              seenMs.push((await waitFor(is('PROCESSING'), `${link.id} PROCESSING`)) - mined);
              await chain.reachDepth();
              const atDepth = performance.now();
              const atDepthWall = Date.now();
              confirmMs.push((await waitFor(is('CONFIRMED'), `${link.id} CONFIRMED`)) - atDepth);
              const { confirmed_ms } = await readLink(stack, link.id);
              if (confirmed_ms === null) throw new Error(`chain: ${link.id} is CONFIRMED with no confirmed_at`);
              confirmDbMs.push(confirmed_ms - atDepthWall);
              const hook = () => receiver.requestsTo(hookPath).find((r) => r.body.includes(link.id));
              await waitFor(() => hook() !== undefined, `${link.id}'s payment_link.confirmed webhook`);
              webhookMs.push(hook()!.at - atDepth);
              // The API agrees, asked once (far inside its rate limit); any other answer ends the bench.
              const read = await stack.request({ method: 'GET', url: `/v1/payment-links/${link.id}`, key });
              expectOk(`chain: GET /v1/payment-links/${link.id}`, read);
              if (read.body.status !== 'CONFIRMED') throw new Error(`chain: the database says CONFIRMED, the API ${read.body.status}`);
            }
            const name = `${chain.rail}_poll${poll}ms`;
            results[name] = {
              rail: chain.rail, pollMs: poll, rounds,
              minedToProcessingP50Ms: percentile(seenMs, 50), minedToProcessingP99Ms: percentile(seenMs, 99),
              depthToConfirmedP50Ms: percentile(confirmMs, 50), depthToConfirmedP99Ms: percentile(confirmMs, 99),
              // The same, by the database's confirmed_at: within the 10 ms poll of the figures above.
              depthToConfirmedAtP50Ms: percentile(confirmDbMs, 50), depthToConfirmedAtP99Ms: percentile(confirmDbMs, 99),
              depthToWebhookP50Ms: percentile(webhookMs, 50), depthToWebhookP99Ms: percentile(webhookMs, 99),
            };
            console.error(`chain ${name}:`, JSON.stringify(results[name]));
          } finally {
            await stack.stop();
          }
        }
      } finally {
        await chain.stop();
      }
    }
  } finally {
    await receiver.down();
    await stopTestTemporal();
  }
  return results;
}
