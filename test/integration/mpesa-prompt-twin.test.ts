import { beforeAll, describe, expect, it } from '@jest/globals';
import { sql } from 'slonik';
import { z } from 'zod';
import { sandboxPaybill } from '../helpers/daraja.js';
import { mobileMoneyLinks } from '../helpers/mobile-money-links.js';
import { mobileMoneyStack } from '../helpers/mobile-money-stack.js';
import { eventually } from '../helpers/wait.js';

/**
 * A paid prompt whose callback was lost carries no receipt (the STK query has none), so when the
 * same money also arrives as a paybill confirmation (C2B, TransID = the receipt) the receipt cannot
 * tie the two together. Same link, same amount, the same phone (as Daraja masks it) and a payment
 * time inside the prompt's window do: the money counts once, in either order. A second payment
 * from another phone still counts.
 */
const merchant = sandboxPaybill('twin-1');
const m = mobileMoneyStack([merchant], 'Prompt twins', { MPESA_QUERY_AFTER_SECONDS: '1' });
beforeAll(async () => {
  expect((await links.connect(merchant)).status).toBe(200);
});

const links = mobileMoneyLinks(() => ({ stack: m.stack, storeId: m.store.clientId, key: m.key }));
const { newLink, getLink, statusIs } = links;
/** Daraja's mask of a phone in C2B posts: the first five digits and the last three. */
const masked = (phone: string) => `${phone.slice(0, 5)}****${phone.slice(-3)}`;
const confirm = (body: Record<string, string>) => {
  const confirmation = m.daraja.c2bRegistrations.get(merchant.shortCode)!.confirmationUrl;
  return m.stack.request({ method: 'POST', url: new URL(confirmation).pathname, payload: { TransactionType: 'Pay Bill', BusinessShortCode: merchant.shortCode, FirstName: 'Wanjiru', ...body } });
};
const c2bState = async (transId: string) => m.stack.pool.maybeOneFirst(sql.type(z.object({ state: z.string() }))`
  SELECT state FROM mpesa_c2b_payments WHERE trans_id = ${transId}`);
const confirmedPayments = (l: { payments: Array<{ state: string }> }) => l.payments.filter((p) => p.state === 'confirmed');

/** A prompt paid on the phone whose callback never comes: the STK query settles it, with no receipt. */
async function paidPromptWithoutCallback(linkId: string, phone: string) {
  m.daraja.script(phone, { result: 'success', callback: 'none' });
  const prompt = await m.stack.request({ method: 'POST', url: `/v1/merchant/payment-links/${linkId}/pay/mobile-money`, key: m.key, payload: { phoneNumber: phone } });
  expect(prompt.status).toBe(200);
  return m.daraja.complete(prompt.body.checkoutRequestId, 'success');
}

describe('a prompt paid without a callback, and its paybill confirmation', () => {
  it('prompt first: the confirmation of the same money counts nothing', async () => {
    const link = await newLink(65);
    const phone = '254722000101';
    const paid = await paidPromptWithoutCallback(link.id, phone);
    await eventually(statusIs(link.id, 'CONFIRMED'), 'the STK query confirms the link');
    expect((await confirm({ TransID: paid.receipt!, TransAmount: '65.00', BillRefNumber: link.mobileMoneyAccountRef, MSISDN: masked(phone) })).status).toBe(200);
    await eventually(async () => ((await c2bState(paid.receipt!)) === 'counted_as_prompt' ? true : undefined), 'recognised as the prompt twin');
    const l = await getLink(link.id);
    expect(confirmedPayments(l)).toEqual([expect.objectContaining({ amount: '65', externalId: paid.checkoutRequestId })]);
    expect(l.amountsReceived.KES).toBe('65');
  });

  it('confirmation first: the prompt then counts nothing and says which payment counted it', async () => {
    const link = await newLink(75);
    const phone = '254722000102';
    m.daraja.script(phone, { result: 'success', callback: 'none' });
    const prompt = await m.stack.request({ method: 'POST', url: `/v1/merchant/payment-links/${link.id}/pay/mobile-money`, key: m.key, payload: { phoneNumber: phone } });
    expect(prompt.status).toBe(200);
    // The phone pays; Daraja's paybill confirmation arrives before the workflow asks the STK query.
    const receipt = 'TWN' + String(Date.now()).slice(-7);
    expect((await confirm({ TransID: receipt, TransAmount: '75.00', BillRefNumber: link.mobileMoneyAccountRef, MSISDN: masked(phone) })).status).toBe(200);
    await eventually(statusIs(link.id, 'CONFIRMED'), 'the confirmation confirms the link');
    await m.daraja.complete(prompt.body.checkoutRequestId, 'success');
    const l = await eventually(async () => {
      const x = await getLink(link.id);
      return x.payments.some((p: { state: string }) => p.state === 'failed') ? x : undefined;
    }, 'the prompt settled as already counted');
    expect(confirmedPayments(l)).toEqual([expect.objectContaining({ amount: '75', externalId: receipt })]);
    expect(l.payments.find((p: { state: string }) => p.state === 'failed').failureReason).toContain(`already counted as M-Pesa payment ${receipt}`);
    expect(l.amountsReceived.KES).toBe('75');
  });

  it('a payment of the same amount from another phone is a second payment: both count', async () => {
    const link = await newLink(85);
    const paid = await paidPromptWithoutCallback(link.id, '254722000103');
    await eventually(statusIs(link.id, 'CONFIRMED'), 'the STK query confirms the link');
    const other = 'OTH' + String(Date.now()).slice(-7);
    expect(paid.receipt).not.toBe(other);
    expect((await confirm({ TransID: other, TransAmount: '85.00', BillRefNumber: link.mobileMoneyAccountRef, MSISDN: masked('254733000999') })).status).toBe(200);
    const l = await eventually(async () => {
      const x = await getLink(link.id);
      return confirmedPayments(x).length === 2 ? x : undefined;
    }, 'both payments counted');
    expect(l.amountsReceived.KES).toBe('170');
    expect(await c2bState(other)).toBe('matched');
  });
});
