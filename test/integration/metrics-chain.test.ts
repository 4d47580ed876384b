import { afterAll, beforeAll, describe, expect, it } from '@jest/globals';
import type { CreatedStore } from '../../db/store-repo.js';
import { createMetricsRegistry, type MetricsRegistry } from '../../runtime/metrics.js';
import { deployTestToken, startAnvil, type Anvil, type TestToken } from '../helpers/anvil.js';
import { connectAllRails } from '../helpers/fixtures.js';
import { startStack, type Stack } from '../helpers/stack.js';
import { eventually } from '../helpers/wait.js';

/** The on-chain path counted: anvil plays BSC (depth 3); the watcher, the workflow and PostgreSQL are the real ones. */
let anvil: Anvil;
let usdt: TestToken;
let stack: Stack;
let store: CreatedStore;
let registry: MetricsRegistry;

beforeAll(async () => {
  anvil = await startAnvil();
  usdt = await deployTestToken(anvil, { decimals: 18 });
  await usdt.mint(anvil.accounts[1]!, 10n ** 30n);
  registry = createMetricsRegistry();
  stack = await startStack({
    CHAIN_WATCHERS: 'on',
    CHAIN_POLL_MS: '100',
    RPC_URL_USDT_BSC_TEST: anvil.url,
    USDT_CONTRACT_USDT_BSC_TEST: usdt.address,
    CONFIRMATIONS_USDT_BSC: '3',
  }, { metrics: registry });
  store = await stack.createStore('Chain metrics');
  await connectAllRails(stack, store.clientId, 'test');
}, 120_000);
afterAll(async () => {
  await stack?.stop();
  await anvil?.stop();
});

const series = async (name: string, labels: string) => {
  const line = (await registry.render()).body.split('\n').find((l) => l.startsWith(`${name}{${labels}} `));
  return line ? Number(line.split(' ').pop()) : undefined;
};

describe('on-chain metrics', () => {
  it('count a deposit seen and confirmed, the confirmation and its times, and the watcher\'s position', async () => {
    const key = store.keys.test.secretKey;
    const link = (await stack.request({ method: 'POST', url: '/v1/payment-links', key, payload: { usdtAmount: '10', enabledRails: ['USDT_BSC'] } })).body;
    await usdt.transfer(anvil.accounts[1]!, link.bscAddress, 10n * 10n ** 18n);
    await eventually(async () => (await series('malipo_chain_deposits_total', 'event="seen",rail="USDT_BSC",environment="test"')) === 1 || undefined, 'the deposit counted as seen', 30_000);
    await anvil.rpc('anvil_mine', ['0x3']);
    await eventually(async () => (await series('malipo_payment_links_total', 'event="confirmed",rail="USDT_BSC",environment="test"')) === 1 || undefined, 'the confirmation counted', 30_000);
    expect(await series('malipo_chain_deposits_total', 'event="confirmed",rail="USDT_BSC",environment="test"')).toBe(1);
    expect(await series('malipo_link_evidence_to_confirmation_seconds_count', 'rail="USDT_BSC"')).toBe(1);
    expect(await series('malipo_chain_head_block', 'rail="USDT_BSC",environment="test"')).toBeGreaterThan(0);
    expect(await series('malipo_chain_lag_blocks', 'rail="USDT_BSC",environment="test"')).toBeGreaterThanOrEqual(0);
    // Seconds of chain time: the lag in blocks times BSC's nominal 0.75 s block (rails/evm/facts.ts), from one tick.
    const text = (await registry.render()).body;
    const lagBlocks = Number(/^malipo_chain_lag_blocks\{rail="USDT_BSC",environment="test"\} (\S+)$/m.exec(text)?.[1]);
    expect(/^malipo_chain_lag_seconds\{rail="USDT_BSC",environment="test"\} (\S+)$/m.exec(text)?.[1]).toBe(String(lagBlocks * 0.75));
    const body = (await registry.render()).body;
    expect(body).not.toContain(link.bscAddress.toLowerCase().slice(2));
    expect(body).not.toContain(link.id);
  });
});
