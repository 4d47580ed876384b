import { afterAll, beforeAll, describe, expect, it } from '@jest/globals';
import type { CreatedStore } from '../../db/store-repo.js';
import { formatKeyEntry, generateKey } from '../../domain/crypto/credentials.js';
import { maxPromptsPerLink, maxPromptsPerPhone } from '../../domain/mpesa/prompt-limits.js';
import { searchAttributes } from '../../domain/search-attributes.js';
import { startDarajaEmulator, type DarajaEmulator } from '../../emulators/daraja/server.js';
import { linkState, paymentConfirmed, paymentLinkWorkflowId } from '../../domain/workflow-contract.js';
import { connectBody, sandboxPaybill } from '../helpers/daraja.js';
import { recordDeposit } from '../helpers/deposits.js';
import { connectAllRails } from '../helpers/fixtures.js';
import { startStack, type Stack } from '../helpers/stack.js';
import { eventually } from '../helpers/wait.js';
import { maybeRecordHistory } from '../helpers/histories.js';

/**
 * The hosted checkout is public, so what one client can make a link's workflow do is bounded:
 * prompts per link and per phone are capped with a clear error, and a link that keeps receiving
 * messages continues as new with its state before its history grows long.
 */
const merchant = sandboxPaybill('bounded-5');
let daraja: DarajaEmulator;
let stack: Stack;
let store: CreatedStore;
let key: string;
let phoneSeq = 500;
const nextPhone = () => `2547${String(++phoneSeq).padStart(8, '0')}`;

beforeAll(async () => {
  daraja = await startDarajaEmulator({ merchants: [merchant], deliverVia: (u) => new URL(u.pathname, stack.baseUrl) });
  stack = await startStack({ MPESA_SANDBOX_URL: daraja.url, ENCRYPTION_KEY: formatKeyEntry(generateKey()), LINK_HISTORY_EVENT_LIMIT: '40' });
  store = await stack.createStore('Bounded');
  key = store.keys.test.secretKey;
  const res = await stack.request({ method: 'POST', url: `/v1/merchant/clients/${store.clientId}/mobile-money/connect`, key, payload: connectBody(merchant) });
  expect(res.status).toBe(200);
  await connectAllRails(stack, store.clientId, 'test');
});
afterAll(async () => {
  await stack?.stop();
  await daraja?.close();
});

const newLink = async (payload: Record<string, unknown>) => {
  const res = await stack.request({ method: 'POST', url: '/v1/payment-links', key, payload });
  expect(res.status).toBe(201);
  await stack.workflowStarted(res.body.id); // signalled and queried directly below
  return res.body as { id: string; bscAddress: string };
};
const getLink = async (id: string) => (await stack.request({ method: 'GET', url: `/v1/payment-links/${id}`, key })).body;
const pay = (linkId: string, phoneNumber: string) =>
  stack.request({ method: 'POST', url: `/v1/merchant/payment-links/${linkId}/pay/mobile-money`, key, payload: { phoneNumber } });

/** A prompt the customer cancels; resolves once the link is PENDING again. */
async function cancelledPrompt(linkId: string, phone: string): Promise<void> {
  daraja.script(phone, { result: 'cancelled' });
  const res = await pay(linkId, phone);
  expect(res.status).toBe(200);
  await daraja.complete(res.body.checkoutRequestId);
  await eventually(async () => ((await getLink(linkId)).status === 'PENDING' ? true : undefined), 'the link to reopen');
}

describe('M-Pesa prompts', () => {
  it(`stop at ${maxPromptsPerLink} per link with a clear 409`, async () => {
    const link = await newLink({ enabledRails: ['MOBILE_MONEY'], mobileMoneyAmount: 10 });
    for (let i = 0; i < maxPromptsPerLink; i++) await cancelledPrompt(link.id, nextPhone());
    const refused = await pay(link.id, nextPhone());
    expect(refused.status).toBe(409);
    expect(refused.body.error).toMatchObject({ type: 'conflict_error', code: 'prompt_limit_reached' });
    expect(refused.body.error.message).toContain('create a new link');
    expect((await getLink(link.id)).status).toBe('PENDING');
  }, 90_000);

  it(`stop at ${maxPromptsPerPhone} per phone across links, with Retry-After`, async () => {
    const phone = nextPhone();
    for (let i = 0; i < maxPromptsPerPhone; i++) {
      const link = await newLink({ enabledRails: ['MOBILE_MONEY'], mobileMoneyAmount: 10 });
      await cancelledPrompt(link.id, phone);
    }
    const link = await newLink({ enabledRails: ['MOBILE_MONEY'], mobileMoneyAmount: 10 });
    const before = daraja.requests.length;
    const refused = await pay(link.id, phone);
    expect(refused.status).toBe(429);
    expect(refused.body.error).toMatchObject({ type: 'rate_limit_error', code: 'phone_prompt_limit', param: 'phoneNumber' });
    expect(Number(refused.headers['retry-after'])).toBeGreaterThan(0);
    expect(daraja.requests.length).toBe(before);
    expect(await getLink(link.id)).toMatchObject({ status: 'PENDING', payments: [] });
  }, 90_000);
});

describe('a link that keeps receiving payments', () => {
  it('continues as new with its state before the history grows long, and still settles correctly', async () => {
    const link = await newLink({ usdtAmount: '10', enabledRails: ['USDT_BSC'] });
    const handle = stack.temporal.workflow.getHandle(paymentLinkWorkflowId(link.id));
    const firstRunId = (await handle.describe()).runId;
    const deposit = (tag: string, usdt: bigint) =>
      recordDeposit(stack, { linkId: link.id, storeId: store.clientId, rail: 'USDT_BSC', to: link.bscAddress, tag: `${link.id}:${tag}`, amountMinor: usdt * 10n ** 18n, decimals: 18, state: 'confirmed' });
    for (let i = 1; i <= 6; i++) {
      await handle.signal(paymentConfirmed, await deposit(`dust${i}`, 1n));
      await eventually(async () => ((await getLink(link.id)).amountReceived === String(i) ? true : undefined), `${i} USDT received`);
    }
    // The run continues as new between messages, in a workflow task after the payment's write:
    // under load a read may see the amount before that task has run.
    const later = await eventually(async () => {
      const d = await handle.describe();
      return d.runId !== firstRunId ? d : undefined;
    }, 'the run to continue as new');
    expect(later.runId).not.toBe(firstRunId);
    const first = await stack.temporal.workflow.getHandle(paymentLinkWorkflowId(link.id), firstRunId).describe();
    expect(first.status.name).toBe('CONTINUED_AS_NEW');
    await maybeRecordHistory(handle, 'payment-link-continued-as-new', firstRunId);
    expect(later.typedSearchAttributes.get(searchAttributes.store)).toBe(store.clientId);
    // The memo the Temporal UI shows (the link's state) carries over too.
    expect(await later.memo).toEqual(await first.memo);
    expect(await later.memo).toHaveProperty('expiresAt');

    // The new run remembers every payment: a repeat counts once, the rest confirms the link.
    await handle.signal(paymentConfirmed, await deposit('dust1', 1n));
    await handle.signal(paymentConfirmed, await deposit('rest', 4n));
    const done = await eventually(async () => {
      const l = await getLink(link.id);
      return l.status === 'CONFIRMED' ? l : undefined;
    }, 'CONFIRMED after continue-as-new');
    expect(done.amountReceived).toBe('10');
    expect(done.payments).toHaveLength(7);
    const state = await handle.query(linkState);
    expect(state.payments).toHaveLength(7);
    expect(state.status).toBe('CONFIRMED');
    const settled = await handle.describe();
    expect(settled.typedSearchAttributes.get(searchAttributes.status)).toBe('CONFIRMED');
    expect(await settled.memo).toMatchObject({ status: 'CONFIRMED' });
  }, 90_000);
});
