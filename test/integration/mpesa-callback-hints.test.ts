import { afterAll, beforeAll, describe, expect, it } from '@jest/globals';
import { mkdtemp, readFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { Writable } from 'node:stream';
import pino from 'pino';
import { sql } from 'slonik';
import { z } from 'zod';
import { loggerOptions } from '../../api/plugins/log-redaction.js';
import type { CreatedStore } from '../../db/store-repo.js';
import { formatKeyEntry, generateKey } from '../../domain/crypto/credentials.js';
import { startDarajaEmulator, type DarajaEmulator, type Prompt } from '../../emulators/daraja/server.js';
import { paymentLinkWorkflowId } from '../../domain/workflow-contract.js';
import { dumpDatabase } from '../chaos/harness/evidence.js';
import { connectBody, sandboxPaybill } from '../helpers/daraja.js';
import { maybeRecordHistory } from '../helpers/histories.js';
import { startStack, type Stack } from '../helpers/stack.js';
import { eventually } from '../helpers/wait.js';

/**
 * Every M-Pesa callback is a hint settled by an STK query, and the amount that counts is the
 * prompt's: a forged callback (someone who learned a callback URL) can neither fail a paid link
 * nor change what it was paid, and the token never reaches a log line or a workflow history.
 */
const merchant = sandboxPaybill('hints-7');
const logLines: string[] = [];
let daraja: DarajaEmulator;
let stack: Stack;
let store: CreatedStore;
let key: string;
let phoneSeq = 300;
const nextPhone = () => `2547${String(++phoneSeq).padStart(8, '0')}`;

beforeAll(async () => {
  const sink = new Writable({ write: (chunk, _enc, done) => void (logLines.push(String(chunk)), done()) });
  const logger = pino(loggerOptions('info'), sink);
  daraja = await startDarajaEmulator({ merchants: [merchant], deliverVia: (u) => new URL(u.pathname, stack.baseUrl) });
  stack = await startStack({ MPESA_SANDBOX_URL: daraja.url, ENCRYPTION_KEY: formatKeyEntry(generateKey()), MPESA_QUERY_AFTER_SECONDS: '1' }, { logger });
  store = await stack.createStore('Hints');
  key = store.keys.test.secretKey;
  const res = await stack.request({ method: 'POST', url: `/v1/merchant/clients/${store.clientId}/mobile-money/connect`, key, payload: connectBody(merchant) });
  expect(res.status).toBe(200);
});
afterAll(async () => {
  await stack?.stop();
  await daraja?.close();
});

async function openPrompt(amountKes: number, phone = nextPhone()) {
  const link = (await stack.request({ method: 'POST', url: '/v1/payment-links', key, payload: { enabledRails: ['MOBILE_MONEY'], mobileMoneyAmount: amountKes } })).body;
  daraja.script(phone, { result: 'success' });
  const pay = await stack.request({ method: 'POST', url: `/v1/merchant/payment-links/${link.id}/pay/mobile-money`, key, payload: { phoneNumber: phone } });
  expect(pay.status).toBe(200);
  const prompt: Prompt = daraja.state.prompts.get(pay.body.checkoutRequestId)!;
  return { linkId: link.id as string, phone, prompt, checkoutRequestId: pay.body.checkoutRequestId as string, token: prompt.callbackUrl.split('/').pop()! };
}

const forge = (p: Awaited<ReturnType<typeof openPrompt>>, stkCallback: Record<string, unknown>) =>
  stack.request({
    method: 'POST', url: `/v1/callbacks/mpesa/${p.token}`,
    payload: { Body: { stkCallback: { MerchantRequestID: p.prompt.merchantRequestId, CheckoutRequestID: p.checkoutRequestId, ...stkCallback } } },
  });
const getLink = async (id: string) => (await stack.request({ method: 'GET', url: `/v1/payment-links/${id}`, key })).body;
const statusIs = (id: string, status: string) => async () => {
  const l = await getLink(id);
  return l.status === status ? l : undefined;
};
const pause = (ms: number) => new Promise((r) => setTimeout(r, ms));

describe('a forged M-Pesa callback', () => {
  it('claiming failure before the genuine success neither fails the link nor hides the success', async () => {
    const p = await openPrompt(50);
    const forged = await forge(p, { ResultCode: 1032, ResultDesc: 'Request cancelled by user' });
    expect(forged.status).toBe(200);
    await pause(2_000);
    // The STK query says the prompt is still open: the forged failure changed nothing.
    const during = await getLink(p.linkId);
    expect(during.status).toBe('PROCESSING');
    expect(during.payments[0]).toMatchObject({ state: 'initiated' });

    await daraja.complete(p.checkoutRequestId, 'success');
    const link = await eventually(statusIs(p.linkId, 'CONFIRMED'), 'the genuine success to confirm the link');
    expect(link).toMatchObject({ confirmedRail: 'MOBILE_MONEY', externalId: p.prompt.receipt, payer: p.phone });
    const suspicious = await stack.pool.anyFirst(sql.type(z.object({ suspicious_reason: z.string().nullable() }))`
      SELECT suspicious_reason FROM mpesa_callbacks WHERE checkout_request_id = ${p.checkoutRequestId} ORDER BY id`);
    expect(suspicious).toEqual(['claims failure; the STK query says the prompt was paid', null]);
    await maybeRecordHistory(stack.temporal.workflow.getHandle(paymentLinkWorkflowId(p.linkId)), 'payment-link-mpesa-forged-failure-then-paid');
  });

  it('claiming success at another amount is stored as suspicious; the link counts the prompt’s amount', async () => {
    const p = await openPrompt(60);
    const forged = await forge(p, {
      ResultCode: 0, ResultDesc: 'The service request is processed successfully.',
      CallbackMetadata: { Item: [{ Name: 'Amount', Value: 1 }, { Name: 'MpesaReceiptNumber', Value: 'FAKE000001' }, { Name: 'TransactionDate', Value: 20260101120000 }, { Name: 'PhoneNumber', Value: Number(p.phone) }] },
    });
    expect(forged.status).toBe(200);
    await pause(1_500);
    expect((await getLink(p.linkId)).status).toBe('PROCESSING');

    await daraja.complete(p.checkoutRequestId, 'success');
    const link = await eventually(statusIs(p.linkId, 'CONFIRMED'), 'CONFIRMED at the prompt amount');
    expect(link.externalId).toBe(p.prompt.receipt);
    expect(link.payments).toEqual([expect.objectContaining({ rail: 'MOBILE_MONEY', amount: '60', disposition: 'payment', externalId: p.prompt.receipt })]);
    const rows = await stack.pool.any(sql.type(z.object({ receipt: z.string().nullable(), suspicious_reason: z.string().nullable() }))`
      SELECT receipt, suspicious_reason FROM mpesa_callbacks WHERE checkout_request_id = ${p.checkoutRequestId} ORDER BY id`);
    expect(rows).toEqual([
      { receipt: 'FAKE000001', suspicious_reason: 'claims Amount 1; the prompt asked for 60' },
      { receipt: p.prompt.receipt, suspicious_reason: null },
    ]);
  });

  it('a forged receipt at the prompt’s amount is withdrawn when the genuine callback names another', async () => {
    // Callbacks are unsigned and the STK query carries no receipt: a forger who learned the URL
    // can be first. The money is right either way; the receipt shown must not stay the forger's.
    const p = await openPrompt(65);
    daraja.script(p.phone, { result: 'success', callback: 'none' });
    const settled = await daraja.complete(p.checkoutRequestId);
    const claim = (receipt: string) => ({
      ResultCode: 0, ResultDesc: 'The service request is processed successfully.',
      CallbackMetadata: { Item: [{ Name: 'Amount', Value: 65 }, { Name: 'MpesaReceiptNumber', Value: receipt }, { Name: 'TransactionDate', Value: 20260101120000 }, { Name: 'PhoneNumber', Value: Number(p.phone) }] },
    });
    expect((await forge(p, claim('FORGED0001'))).status).toBe(200);
    expect((await eventually(statusIs(p.linkId, 'CONFIRMED'), 'CONFIRMED')).externalId).toBe('FORGED0001');
    expect((await forge(p, claim(settled.receipt!))).status).toBe(200);
    const link = await getLink(p.linkId);
    expect(link.externalId).toBe(p.checkoutRequestId);
    expect(link.payments).toEqual([expect.objectContaining({ amount: '65', disposition: 'payment', externalId: p.checkoutRequestId })]);
    const reasons = await stack.pool.anyFirst(sql.type(z.object({ suspicious_reason: z.string().nullable() }))`
      SELECT suspicious_reason FROM mpesa_callbacks WHERE checkout_request_id = ${p.checkoutRequestId} ORDER BY id`);
    expect(reasons).toEqual(['names another receipt than a second callback of the prompt', 'names another receipt than a second callback of the prompt']);
  });

  it('claiming success on a prompt the customer then cancels never confirms it', async () => {
    const phone = nextPhone();
    const p = await openPrompt(70, phone);
    daraja.script(phone, { result: 'cancelled' });
    await forge(p, {
      ResultCode: 0, ResultDesc: 'The service request is processed successfully.',
      CallbackMetadata: { Item: [{ Name: 'Amount', Value: 70 }, { Name: 'MpesaReceiptNumber', Value: 'FAKE000002' }, { Name: 'PhoneNumber', Value: Number(phone) }] },
    });
    await daraja.complete(p.checkoutRequestId);
    const link = await eventually(statusIs(p.linkId, 'PENDING'), 'the cancelled prompt to reopen the link');
    expect(link.payments[0]).toMatchObject({ state: 'failed' });
    expect(link.confirmedRail).toBeNull();
  });
});

describe('the callback token', () => {
  it('appears in no log line, no workflow history and nowhere in the database', async () => {
    const p = await openPrompt(80);
    await daraja.complete(p.checkoutRequestId, 'success');
    await eventually(statusIs(p.linkId, 'CONFIRMED'), 'CONFIRMED');
    expect(p.prompt.deliveries).toEqual([{ status: 200 }]);
    // The callback request was logged, with its path censored.
    expect(logLines.some((l) => l.includes('/v1/callbacks/mpesa/[redacted]'))).toBe(true);
    expect(logLines.filter((l) => l.includes(p.token))).toEqual([]);
    const history = await stack.temporal.workflow.getHandle(paymentLinkWorkflowId(p.linkId)).fetchHistory();
    // Payloads (inputs, results, signals, updates, markers) are base64 in the history's JSON.
    const text = JSON.stringify(history).replace(/"data":"([A-Za-z0-9+/=]+)"/g, (_m, b64: string) => Buffer.from(b64, 'base64').toString('utf8'));
    expect(text).toContain(p.checkoutRequestId);
    expect(text).not.toContain(p.token);
    // Only its SHA-256 is stored (as API keys are): a database dump or backup does not hand out
    // callback URLs. The URL still works: a repeat of the genuine callback is accepted.
    const dump = join(await mkdtemp(join(tmpdir(), 'malipo-dump-')), 'app.sql');
    expect(await dumpDatabase(stack.config.databaseUrl!, dump)).toBe('pg_dump');
    const dumped = await readFile(dump, 'utf8');
    expect(dumped).toContain(p.checkoutRequestId);
    expect(dumped).not.toContain(p.token);
    expect((await forge(p, { ResultCode: 1032, ResultDesc: 'Request cancelled by user' })).status).toBe(200);
  });
});
