import { afterAll, beforeAll, describe, expect, it } from '@jest/globals';
import type { Address } from 'viem';
import type { CreatedStore } from '../../db/store-repo.js';
import { deriveAddress } from '../../rails/chain/derive-address.js';
import { deployTestToken, startAnvil, type Anvil, type TestToken } from '../helpers/anvil.js';
import { expectSecretKeyRequired } from '../helpers/auth-cases.js';
import { connectAllRails } from '../helpers/fixtures.js';
import { startStack, type Stack } from '../helpers/stack.js';
import { eventually } from '../helpers/wait.js';
import { maybeRecordHistory } from '../helpers/histories.js';
import { invoiceWorkflowId } from '../../domain/workflow-contract.js';

let anvil: Anvil;
let usdt: TestToken;
let stack: Stack;
let store: CreatedStore;
let key: string;
let xpubs: { evm: string; tron: string };

const safeFields = ['amount', 'confirmations', 'environment', 'expiresAt', 'id', 'metadata', 'network', 'paymentAddress', 'publishableKey', 'simulated', 'status', 'token', 'txHash'];

beforeAll(async () => {
  anvil = await startAnvil();
  usdt = await deployTestToken(anvil, { decimals: 18 });
  await usdt.mint(anvil.accounts[1]!, 10n ** 30n);
  stack = await startStack({
    CHAIN_WATCHERS: 'on',
    CHAIN_POLL_MS: '100',
    RPC_URL_USDT_BSC_TEST: anvil.url,
    USDT_CONTRACT_USDT_BSC_TEST: usdt.address,
    CONFIRMATIONS_USDT_BSC: '3',
  });
  store = await stack.createStore('Secret Store Name');
  key = store.keys.test.secretKey;
  xpubs = await connectAllRails(stack, store.clientId, 'test');
}, 120_000);
afterAll(async () => {
  await stack?.stop();
  await anvil?.stop();
});

const lookup = (id: string, headers?: Record<string, string>) => stack.request({ method: 'GET', url: `/v1/invoices/${id}`, headers });

describe('POST /v1/invoices and GET /v1/invoices/:id', () => {
  it('creates an invoice whose public lookup has exactly the safe shape, identical to the create response', async () => {
    const res = await stack.request({ method: 'POST', url: '/v1/invoices', key, payload: { amount: '25', network: 'BSC', metadata: { order: 'A-1' } } });
    expect(res.status).toBe(201);
    expect(Object.keys(res.body).sort()).toEqual(safeFields);
    expect(res.body).toMatchObject({
      amount: '25.000000',
      token: 'USDT',
      network: 'BSC',
      status: 'PENDING',
      paymentAddress: deriveAddress(xpubs.evm, 'evm', 1, 0),
      txHash: null,
      confirmations: 0,
      metadata: { order: 'A-1' },
      simulated: false,
      environment: 'test',
      publishableKey: store.keys.test.publishableKey,
    });
    expect(res.body.id).toMatch(/^inv_[0-9a-z]{24}$/);
    const got = await lookup(res.body.id);
    expect(got.status).toBe(200);
    expect(got.body).toEqual(res.body);
    expect(got.text).not.toContain('Secret Store Name');
    expect(got.text).not.toContain(store.clientId);
    expect(got.headers['cache-control']).toBe('no-cache');
  });

  it('answers an unchanged poll with 304 and no body', async () => {
    const inv = (await stack.request({ method: 'POST', url: '/v1/invoices', key, payload: { amount: '1', network: 'BSC' } })).body;
    const first = await lookup(inv.id);
    expect(first.body.metadata).toEqual({});
    const etag = first.headers.etag as string;
    const again = await lookup(inv.id, { 'if-none-match': etag });
    expect(again.status).toBe(304);
    expect(again.text).toBe('');
  });

  it('counts confirmations up as blocks arrive, then shows PAID', async () => {
    const inv = (await stack.request({ method: 'POST', url: '/v1/invoices', key, payload: { amount: '2', network: 'BSC' } })).body;
    const tx = await usdt.transfer(anvil.accounts[1]!, inv.paymentAddress as Address, 2n * 10n ** 18n);
    const seen = await eventually(async () => {
      const b = (await lookup(inv.id)).body;
      return b.status === 'CONFIRMING' ? b : undefined;
    }, 'CONFIRMING', 30_000);
    expect(seen).toMatchObject({ txHash: tx, confirmations: 1 });
    await anvil.rpc('anvil_mine', ['0x1']);
    await eventually(async () => ((await lookup(inv.id)).body.confirmations === 2 ? true : undefined), 'two confirmations', 30_000);
    await anvil.rpc('anvil_mine', ['0x1']);
    const paid = await eventually(async () => {
      const b = (await lookup(inv.id)).body;
      return b.status === 'PAID' ? b : undefined;
    }, 'PAID', 30_000);
    expect(paid.confirmations).toBeGreaterThanOrEqual(3);
    expect(paid.txHash).toBe(tx);
    await maybeRecordHistory(stack.temporal.workflow.getHandle(invoiceWorkflowId(inv.id)), 'invoice-paid');
  });

  it('refuses bad input and networks the store has not connected', async () => {
    const cases: [unknown, string][] = [
      [{ amount: '1', network: 'BTC' }, 'network'],
      [{ amount: 'abc', network: 'BSC' }, 'amount'],
      [{ amount: '1', network: 'BSC', token: 'USDC' }, 'token'],
      [{ amount: '1', network: 'BSC', extra: 1 }, 'extra'],
      [{ network: 'BSC' }, 'amount'],
    ];
    for (const [payload, param] of cases) {
      const res = await stack.request({ method: 'POST', url: '/v1/invoices', key, payload });
      expect({ payload, status: res.status, param: res.body.error.param }).toEqual({ payload, status: 400, param });
    }
    const bare = await stack.createStore('Bare');
    const res = await stack.request({ method: 'POST', url: '/v1/invoices', key: bare.keys.test.secretKey, payload: { amount: '1', network: 'TRON' } });
    expect(res.body.error).toMatchObject({ code: 'rail_not_available', param: 'network' });
    await expectSecretKeyRequired(stack, { method: 'POST', url: '/v1/invoices', payload: { amount: '1', network: 'BSC' } });
  });

  it('answers 404 for unknown and malformed ids, and for payment-link ids', async () => {
    const link = (await stack.request({ method: 'POST', url: '/v1/payment-links', key, payload: { usdtAmount: '1', enabledRails: ['USDT_BSC'] } })).body;
    for (const id of ['inv_000000000000000000000000', 'nope', link.id]) {
      const res = await lookup(id);
      expect(res.status).toBe(404);
      expect(res.body.error.type).toBe('not_found_error');
    }
  });

  it('rate-limits lookups per IP', async () => {
    const inv = (await stack.request({ method: 'POST', url: '/v1/invoices', key, payload: { amount: '1', network: 'BSC' } })).body;
    let last = await stack.request({ method: 'GET', url: `/v1/invoices/${inv.id}`, localAddress: '127.0.0.44' });
    for (let i = 1; i <= 300; i++) last = await stack.request({ method: 'GET', url: `/v1/invoices/${inv.id}`, localAddress: '127.0.0.44' });
    expect(last.status).toBe(429);
    expect((await stack.request({ method: 'GET', url: `/v1/invoices/${inv.id}`, localAddress: '127.0.0.45' })).status).toBe(200);
  });
});
