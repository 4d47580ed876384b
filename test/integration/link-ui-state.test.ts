import { afterAll, beforeAll, describe, expect, it } from '@jest/globals';
import type { CreatedStore } from '../../db/store-repo.js';
import { formatKeyEntry, generateKey } from '../../domain/crypto/credentials.js';
import { linkMemoKeys } from '../../domain/link-display.js';
import { searchAttributes } from '../../domain/search-attributes.js';
import { paymentLinkWorkflowId } from '../../domain/workflow-contract.js';
import { startDarajaEmulator, type DarajaEmulator } from '../../emulators/daraja/server.js';
import { connectBody, sandboxPaybill } from '../helpers/daraja.js';
import { connectAllRails } from '../helpers/fixtures.js';
import { maybeRecordHistory } from '../helpers/histories.js';
import { startStack, type Stack } from '../helpers/stack.js';
import { eventually } from '../helpers/wait.js';

/**
 * What the Temporal UI shows ops without a query (issue 34): a settled link's workflow stays
 * "Running" for its late-payment window, so its summary, memo and current details say what it is
 * and until when it watches, read here as the UI reads them (describe, and the SDK's metadata
 * query), against a real Temporal server. None of them carries the payer's phone or an address.
 */
const merchant = sandboxPaybill('ui-state-1');
let daraja: DarajaEmulator;
let stack: Stack;
let store: CreatedStore;
let key: string;
const dayMs = 24 * 60 * 60_000;

beforeAll(async () => {
  daraja = await startDarajaEmulator({ merchants: [merchant], deliverVia: (u) => new URL(u.pathname, stack.baseUrl) });
  stack = await startStack({ MPESA_SANDBOX_URL: daraja.url, ENCRYPTION_KEY: formatKeyEntry(generateKey()) });
  store = await stack.createStore('UI state');
  key = store.keys.test.secretKey;
  const res = await stack.request({ method: 'POST', url: `/v1/merchant/clients/${store.clientId}/mobile-money/connect`, key, payload: connectBody(merchant) });
  expect(res.status).toBe(200);
  await connectAllRails(stack, store.clientId, 'test');
});
afterAll(async () => {
  await stack?.stop();
  await daraja?.close();
});

const getLink = async (id: string) => (await stack.request({ method: 'GET', url: `/v1/payment-links/${id}`, key })).body;
const handle = (id: string) => stack.temporal.workflow.getHandle(paymentLinkWorkflowId(id));

/** Everything the UI shows of the workflow without running a query of ours. */
async function shown(id: string) {
  const desc = await handle(id).describe();
  const metadata = await handle(id).query<{ currentDetails?: string }>('__temporal_workflow_metadata');
  return {
    status: desc.status.name,
    statusAttribute: desc.typedSearchAttributes.get(searchAttributes.status),
    watchUntilAttribute: desc.typedSearchAttributes.get(searchAttributes.watchUntil)?.toISOString(),
    memo: (await desc.memo) as Record<string, unknown>,
    summary: await desc.staticSummary(),
    details: metadata.currentDetails,
  };
}

describe('a link in the Temporal UI', () => {
  it('says PENDING with its expiry, then CONFIRMED and until when it watches for late payments; never the phone or an address', async () => {
    const created = await stack.request({ method: 'POST', url: '/v1/payment-links', key, payload: { usdtAmount: '10.5', enabledRails: ['MOBILE_MONEY', 'USDT_BSC', 'USDT_TRON'] } });
    expect(created.status).toBe(201);
    const link = created.body as { id: string; expiresAt: string; bscAddress: string; tronAddress: string; mobileMoneyAmount: number };
    await stack.workflowStarted(link.id);

    const open = await shown(link.id);
    expect(open.summary).toBe(`Payment link ${link.id} · 10.5 USDT / ${link.mobileMoneyAmount} KES · store ${store.clientId} · test`);
    expect(open.memo).toMatchObject({ [linkMemoKeys.status]: 'PENDING', [linkMemoKeys.expiresAt]: new Date(link.expiresAt).toISOString() });
    expect(open.memo[linkMemoKeys.watchingUntil] ?? null).toBeNull();
    expect(open.watchUntilAttribute).toBeUndefined();
    expect(open.details).toBe(`PENDING · expires at ${new Date(link.expiresAt).toISOString()}`);

    const phone = '254712093847';
    const prompt = await stack.request({ method: 'POST', url: `/v1/merchant/payment-links/${link.id}/pay/mobile-money`, key, payload: { phoneNumber: phone } });
    expect(prompt.status).toBe(200);
    await daraja.complete(prompt.body.checkoutRequestId);
    const paid = await eventually(async () => {
      const l = await getLink(link.id);
      return l.status === 'CONFIRMED' ? l : undefined;
    }, 'CONFIRMED by M-Pesa');
    expect(JSON.stringify(paid)).toContain(phone.slice(-3)); // the payer is on the link (masked or not) …

    const settled = await eventually(async () => {
      const s = await shown(link.id);
      return s.memo[linkMemoKeys.status] === 'CONFIRMED' ? s : undefined;
    }, 'the memo to say CONFIRMED');
    expect(settled.status).toBe('RUNNING'); // still running: watching for late payments
    expect(settled.statusAttribute).toBe('CONFIRMED');
    const until = settled.memo[linkMemoKeys.watchingUntil] as string;
    // The default late window (24 h) from the confirmation, as the workflow's clock saw it.
    expect(Math.abs(Date.parse(until) - (Date.parse(paid.confirmedAt) + dayMs))).toBeLessThan(60_000);
    expect(settled.memo[linkMemoKeys.state]).toBe(`CONFIRMED · watching for late payments until ${until}`);
    expect(settled.details).toBe(`CONFIRMED · watching for late payments until ${until}`);
    expect(settled.summary).toBe(open.summary);
    // The same time as a search attribute: ops list the links that are only watching.
    expect(settled.watchUntilAttribute).toBe(until);
    const query = `${searchAttributes.store.name} = '${store.clientId}' AND ${searchAttributes.status.name} = 'CONFIRMED' AND ${searchAttributes.watchUntil.name} > '${new Date().toISOString()}'`;
    await eventually(async () => {
      for await (const wf of stack.temporal.workflow.list({ query })) if (wf.workflowId === paymentLinkWorkflowId(link.id)) return true;
      return undefined;
    }, 'the link listed by MalipoWatchUntil');

    await maybeRecordHistory(handle(link.id), 'payment-link-ui-state');

    // … but never in what the UI shows, nor any of the link's addresses.
    const everything = JSON.stringify(settled);
    for (const secret of [phone, phone.slice(3), `0${phone.slice(3)}`, link.bscAddress, link.tronAddress]) {
      expect(secret).toBeTruthy();
      expect(everything.toLowerCase()).not.toContain(secret.toLowerCase());
    }
  });

  it('says CANCELLED and until when it watches, from the cancel', async () => {
    const created = await stack.request({ method: 'POST', url: '/v1/payment-links', key, payload: { usdtAmount: '1', enabledRails: ['USDT_BSC'] } });
    await stack.workflowStarted(created.body.id);
    const before = Date.now();
    expect((await stack.request({ method: 'POST', url: `/v1/payment-links/${created.body.id}/cancel`, key })).status).toBe(200);
    const s = await eventually(async () => {
      const got = await shown(created.body.id);
      return got.memo[linkMemoKeys.status] === 'CANCELLED' ? got : undefined;
    }, 'the memo to say CANCELLED');
    const until = Date.parse(s.memo[linkMemoKeys.watchingUntil] as string);
    expect(s.watchUntilAttribute).toBe(s.memo[linkMemoKeys.watchingUntil]);
    expect(until).toBeGreaterThanOrEqual(before + dayMs - 5_000);
    expect(until).toBeLessThanOrEqual(Date.now() + dayMs + 5_000);
    expect(s.details).toMatch(/^CANCELLED · watching for late payments until \d{4}-\d\d-\d\dT/);
    expect(s.summary).toBe(`Payment link ${created.body.id} · 1 USDT · store ${store.clientId} · test`);
  });
});
