import { afterAll, beforeAll, describe, expect, it } from '@jest/globals';
import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { sql } from 'slonik';
import { z } from 'zod';
import type { CreatedStore } from '../../db/store-repo.js';
import { formatKeyEntry, generateKey } from '../../domain/crypto/credentials.js';
import { randomToken } from '../../domain/ids.js';
import { startDarajaEmulator, type DarajaEmulator, type Prompt } from '../../emulators/daraja/server.js';
import { connectBody, sandboxPaybill } from '../helpers/daraja.js';
import { eventually } from '../helpers/wait.js';
import { auditPayments, type MadePayment } from './harness/audit.js';
import { registerSecrets, sized, writeReport } from './harness/report.js';
import { pause, send, startHostileStack, type HostileStack } from './hostile/common.js';

/**
 * Forged, replayed and reordered M-Pesa callbacks against real links, prompts from the Daraja
 * emulator and the real workflow: every link counts exactly the payment the customer made (once),
 * never a forged one. Daraja's genuine callbacks pass through a recorder, so they can be replayed
 * byte for byte.
 */
const scenario = 'forged-callbacks';
const merchant = sandboxPaybill('forged-callbacks');
const rounds = sized(1, 4);

let h: HostileStack;
let daraja: DarajaEmulator;
let recorder: Server;
let store: CreatedStore;
let key: string;
let phoneSeq = 0;
const genuine = new Map<string, string>(); // checkoutRequestId → the body Daraja sent
const made: MadePayment[] = [];
const neverPaid: string[] = [];
const secrets: Array<{ kind: string; value: string }> = [];
const counts = { fuzzedInputs: 0, http5xx: 0 };
const problems: string[] = [];
/** Links confirmed by the genuine payment but showing a receipt from a forged callback. */
const forgedReceiptsShown: string[] = [];

beforeAll(async () => {
  // Daraja → recorder → the app: the recorder keeps each genuine callback body.
  recorder = createServer((req, res) => {
    const chunks: Buffer[] = [];
    req.on('data', (c: Buffer) => chunks.push(c));
    req.on('end', async () => {
      const body = Buffer.concat(chunks).toString('utf8');
      const id = (JSON.parse(body) as { Body?: { stkCallback?: { CheckoutRequestID?: string } } }).Body?.stkCallback?.CheckoutRequestID;
      if (id) genuine.set(id, body);
      const answer = await send(h.stack.baseUrl, { method: 'POST', path: req.url ?? '/', headers: { 'content-type': 'application/json' }, body });
      res.writeHead(answer.status, { 'content-type': 'application/json' }).end(answer.text);
    });
  });
  await new Promise<void>((resolve) => recorder.listen(0, '127.0.0.1', resolve));
  const recorderUrl = `http://127.0.0.1:${(recorder.address() as AddressInfo).port}`;
  daraja = await startDarajaEmulator({ merchants: [merchant], deliverVia: (u) => new URL(u.pathname, recorderUrl) });
  const encryptionKey = formatKeyEntry(generateKey());
  h = await startHostileStack(scenario, { MPESA_SANDBOX_URL: daraja.url, ENCRYPTION_KEY: encryptionKey, MPESA_QUERY_AFTER_SECONDS: '1' });
  store = await h.stack.createStore('Forged callbacks');
  key = store.keys.test.secretKey;
  const res = await h.stack.request({ method: 'POST', url: `/v1/merchant/clients/${store.clientId}/mobile-money/connect`, key, payload: connectBody(merchant) });
  expect(res.status).toBe(200);
  secrets.push(
    { kind: 'ENCRYPTION_KEY', value: encryptionKey }, { kind: 'secret API key', value: key }, { kind: 'secret API key', value: store.keys.live.secretKey },
    { kind: 'M-Pesa consumer key', value: merchant.consumerKey }, { kind: 'M-Pesa consumer secret', value: merchant.consumerSecret },
    { kind: 'M-Pesa passkey', value: merchant.passkey },
  );
}, 120_000);

afterAll(async () => {
  if (h) {
    const audit = await auditPayments({ databaseUrl: h.stack.config.databaseUrl!, temporal: h.stack.temporal, made, delivered: [], deliveredStores: [] });
    await registerSecrets(scenario, secrets);
    await writeReport(scenario, {
      fuzzedInputs: counts.fuzzedInputs, http5xx: counts.http5xx, partialWrites: 0,
      payments: audit.payments, confirmedOnce: audit.confirmedOnce, doubleConfirmed: audit.doubleConfirmed, paymentsLost: audit.paymentsLost,
      stuck: audit.stuck, linksByState: audit.linksByState,
      notes: [
        `${neverPaid.length} links never paid (every callback on them forged or a failure); ${forgedReceiptsShown.length} paid links show a forged receipt`,
        ...forgedReceiptsShown, ...audit.problems, ...problems,
      ],
    });
    await h.finish();
  }
  await daraja?.close();
  await new Promise<void>((resolve) => (recorder ? recorder.close(() => resolve()) : resolve()));
});

const nextPhone = () => `2547${String(20_000_000 + ++phoneSeq).slice(-8)}`;

interface Opened {
  linkId: string;
  phone: string;
  prompt: Prompt;
  token: string;
  amount: number;
}

async function openPrompt(amount: number, phone = nextPhone()): Promise<Opened> {
  const link = await h.stack.request({ method: 'POST', url: '/v1/payment-links', key, payload: { enabledRails: ['MOBILE_MONEY'], mobileMoneyAmount: amount } });
  expect(link.status).toBe(201);
  const pay = await h.stack.request({ method: 'POST', url: `/v1/merchant/payment-links/${link.body.id}/pay/mobile-money`, key, payload: { phoneNumber: phone } });
  expect(pay.status).toBe(200);
  const prompt = daraja.state.prompts.get(pay.body.checkoutRequestId)!;
  const token = prompt.callbackUrl.split('/').pop()!;
  secrets.push({ kind: 'callback token', value: token });
  return { linkId: link.body.id, phone, prompt, token, amount };
}

/** One hostile callback: counted, never a 5xx; its status returned. */
async function post(token: string, body: string): Promise<number> {
  const res = await send(h.stack.baseUrl, { method: 'POST', path: `/v1/callbacks/mpesa/${token}`, headers: { 'content-type': 'application/json' }, body });
  counts.fuzzedInputs++;
  if (res.status >= 500) {
    counts.http5xx++;
    problems.push(`callback answered ${res.status}: ${res.text.slice(0, 200)}`);
  }
  return res.status;
}

const callback = (p: Opened, stk: Record<string, unknown>, checkoutRequestId = p.prompt.checkoutRequestId) =>
  JSON.stringify({ Body: { stkCallback: { MerchantRequestID: p.prompt.merchantRequestId, CheckoutRequestID: checkoutRequestId, ...stk } } });
const success = (p: Opened, amount: number, receipt = `FRG${randomToken(7).toUpperCase()}`) => ({
  ResultCode: 0, ResultDesc: 'The service request is processed successfully.',
  CallbackMetadata: { Item: [{ Name: 'Amount', Value: amount }, { Name: 'MpesaReceiptNumber', Value: receipt }, { Name: 'TransactionDate', Value: 20260101120000 }, { Name: 'PhoneNumber', Value: Number(p.phone) }] },
});
const failure = { ResultCode: 1032, ResultDesc: 'Request cancelled by user' };

const linkOf = async (id: string) => (await h.stack.request({ method: 'GET', url: `/v1/payment-links/${id}`, key })).body;
const settledAs = (id: string, status: string) => eventually(async () => {
  const l = await linkOf(id);
  return l.status === status ? l : undefined;
}, `${id} ${status}`, 30_000);
/** The payments the link counts (confirmed, disposition `payment`), as the API shows them. */
const counted = async (linkId: string): Promise<Array<{ amount: string; externalId: string | null }>> => {
  const payments = ((await linkOf(linkId)).payments ?? []) as Array<{ state: string; disposition: string | null; amount: string; externalId: string | null }>;
  return payments.filter((p) => p.state === 'confirmed' && p.disposition === 'payment').map((p) => ({ amount: p.amount, externalId: p.externalId }));
};

/**
 * The customer paid: the link ends CONFIRMED with exactly this prompt's payment, once, under the
 * genuine receipt. Where forged receipts at the right amount competed with the genuine one, the
 * CheckoutRequestID stand-in (what the link shows when no receipt is believable) is an honest
 * answer too; a forged receipt never is.
 */
async function expectPaidOnce(p: Opened, receipts: 'genuine' | 'genuine-or-stand-in' = 'genuine'): Promise<void> {
  made.push({ linkId: p.linkId, rail: 'MOBILE_MONEY', expect: 'confirmed' });
  const link = await settledAs(p.linkId, 'CONFIRMED');
  const honest = receipts === 'genuine' ? [p.prompt.receipt] : [p.prompt.receipt, p.prompt.checkoutRequestId];
  if (!honest.includes(link.externalId)) forgedReceiptsShown.push(`${p.linkId} shows receipt ${link.externalId}, Daraja issued ${p.prompt.receipt}`);
  expect({ externalId: link.externalId, honest: honest.includes(link.externalId), payer: link.payer }).toEqual({ externalId: link.externalId, honest: true, payer: p.phone });
  expect(await counted(p.linkId)).toEqual([{ amount: String(p.amount), externalId: link.externalId }]);
}

/** Nobody paid: the link never confirms and counts nothing. */
async function expectNeverPaid(p: Opened, settled: 'PENDING' | 'PROCESSING'): Promise<void> {
  neverPaid.push(p.linkId);
  await settledAs(p.linkId, settled);
  await pause(1_500); // an STK query after the callback has had its chance to run
  const link = await linkOf(p.linkId);
  expect(link.status).not.toBe('CONFIRMED');
  expect(link.confirmedRail).toBeNull();
  expect(await counted(p.linkId)).toEqual([]);
}

describe('forged callbacks', () => {
  it('an unknown token is a 404 and changes nothing, even carrying a real prompt’s success', async () => {
    for (let r = 0; r < rounds; r++) {
      const p = await openPrompt(40);
      for (const token of [randomToken(40), p.token.replace(/.$/, (c) => (c === 'a' ? 'b' : 'a')), p.token.toUpperCase(), `${p.token}x`]) {
        expect(await post(token, callback(p, success(p, p.amount)))).toBe(404);
      }
      const rows = await h.stack.pool.anyFirst(sql.type(z.object({ n: z.number() }))`SELECT count(*)::int AS n FROM mpesa_callbacks WHERE checkout_request_id = ${p.prompt.checkoutRequestId}`);
      expect(rows).toEqual([0]);
      daraja.script(p.phone, { result: 'cancelled' });
      await daraja.complete(p.prompt.checkoutRequestId);
      await expectNeverPaid(p, 'PENDING');
    }
  });

  it('the right token with another CheckoutRequestID confirms neither prompt', async () => {
    for (let r = 0; r < rounds; r++) {
      const a = await openPrompt(41);
      const b = await openPrompt(42);
      for (const id of [b.prompt.checkoutRequestId, `ws_CO_${randomToken(20)}`, '', a.prompt.checkoutRequestId.toLowerCase()]) {
        const status = await post(a.token, callback(a, success(a, a.amount), id));
        expect(status).toBeLessThan(500);
      }
      for (const p of [a, b]) {
        daraja.script(p.phone, { result: 'cancelled' });
        await daraja.complete(p.prompt.checkoutRequestId);
      }
      await expectNeverPaid(a, 'PENDING');
      await expectNeverPaid(b, 'PENDING');
    }
  });

  it('a success claim at another amount, then the genuine payment: counted once, at the prompt’s amount', async () => {
    for (let r = 0; r < rounds; r++) {
      const p = await openPrompt(60);
      for (const amount of [1, 6000, 59.99, -60, 0]) expect(await post(p.token, callback(p, success(p, amount)))).toBeLessThan(500);
      await pause(1_500);
      expect((await linkOf(p.linkId)).status).toBe('PROCESSING');
      daraja.script(p.phone, { result: 'success' });
      await daraja.complete(p.prompt.checkoutRequestId);
      await expectPaidOnce(p);
    }
  });

  it('a failure claim, then the genuine payment: still paid, once', async () => {
    for (let r = 0; r < rounds; r++) {
      const p = await openPrompt(70);
      expect(await post(p.token, callback(p, failure))).toBe(200);
      await pause(1_500);
      expect((await linkOf(p.linkId)).status).toBe('PROCESSING');
      daraja.script(p.phone, { result: 'success' });
      await daraja.complete(p.prompt.checkoutRequestId);
      await expectPaidOnce(p);
    }
  });
});

describe('replayed callbacks', () => {
  it('the genuine success sent 5 more times, one after another and then concurrently: counted once', async () => {
    for (let r = 0; r < rounds; r++) {
      const p = await openPrompt(80);
      daraja.script(p.phone, { result: 'success' });
      await daraja.complete(p.prompt.checkoutRequestId);
      const body = genuine.get(p.prompt.checkoutRequestId)!;
      expect(body).toBeDefined();
      for (let i = 0; i < 5; i++) expect(await post(p.token, body)).toBe(200);
      await Promise.all(Array.from({ length: 5 }, () => post(p.token, body)));
      await expectPaidOnce(p);
      await Promise.all(Array.from({ length: 5 }, () => post(p.token, body)));
      await pause(1_000);
      expect(await counted(p.linkId)).toHaveLength(1);
    }
  });

  it('a forged success at the right amount, after the customer paid and before Daraja’s callback: the link never shows a forged receipt', async () => {
    // Found by this suite (forged copies racing the genuine delivery): the forged receipt became
    // the link's externalId (settle-prompt.ts takes the first unsuspicious success at the prompt's
    // amount). Made deterministic: the payment is settled at Daraja, the forged callbacks arrive,
    // then the genuine one.
    const p = await openPrompt(85);
    daraja.script(p.phone, { result: 'success', callback: 'none' });
    const settled = await daraja.complete(p.prompt.checkoutRequestId);
    await Promise.all(Array.from({ length: 5 }, (_, i) => post(p.token, callback(p, success(p, p.amount, `RACE00000${i}`)))));
    await pause(1_500);
    expect(await post(p.token, callback(p, success(p, p.amount, settled.receipt!)))).toBe(200);
    await expectPaidOnce(p, 'genuine-or-stand-in');
  });

  it('forged copies racing the genuine delivery itself', async () => {
    const p = await openPrompt(86);
    daraja.script(p.phone, { result: 'success' });
    const delivering = daraja.complete(p.prompt.checkoutRequestId);
    await Promise.all([delivering, ...Array.from({ length: 5 }, () => post(p.token, callback(p, success(p, p.amount, 'RACE000009'))))]);
    await expectPaidOnce(p, 'genuine-or-stand-in');
  });
});

describe('reordered callbacks', () => {
  it('a failure after the success: still paid once', async () => {
    const p = await openPrompt(90);
    daraja.script(p.phone, { result: 'success' });
    await daraja.complete(p.prompt.checkoutRequestId);
    await expectPaidOnce(p);
    for (let i = 0; i < 3; i++) expect(await post(p.token, callback(p, failure))).toBe(200);
    await pause(1_500);
    expect((await linkOf(p.linkId)).status).toBe('CONFIRMED');
    expect(await counted(p.linkId)).toHaveLength(1);
  });

  it('a success after the failure (the customer cancelled): never paid', async () => {
    const p = await openPrompt(95);
    daraja.script(p.phone, { result: 'cancelled' });
    await daraja.complete(p.prompt.checkoutRequestId);
    await settledAs(p.linkId, 'PENDING');
    expect(await post(p.token, callback(p, success(p, p.amount)))).toBeLessThan(500);
    expect(await post(p.token, genuine.get(p.prompt.checkoutRequestId)!)).toBe(200);
    await expectNeverPaid(p, 'PENDING');
  });

  it('the callback before the push answer reaches the service: paid once', async () => {
    const phone = nextPhone();
    daraja.script(phone, { result: 'success', responseDelayMs: 1_500 });
    const link = await h.stack.request({ method: 'POST', url: '/v1/payment-links', key, payload: { enabledRails: ['MOBILE_MONEY'], mobileMoneyAmount: 99 } });
    const paying = h.stack.request({ method: 'POST', url: `/v1/merchant/payment-links/${link.body.id}/pay/mobile-money`, key, payload: { phoneNumber: phone } });
    // While Daraja holds its answer, the prompt exists: settle it now, so its callback comes first.
    const prompt = await eventually(async () => [...daraja.state.prompts.values()].find((x) => x.phone === phone), 'the prompt');
    await daraja.complete(prompt.checkoutRequestId);
    const pay = await paying;
    expect(pay.status).toBe(200);
    const p: Opened = { linkId: link.body.id, phone, prompt, token: prompt.callbackUrl.split('/').pop()!, amount: 99 };
    secrets.push({ kind: 'callback token', value: p.token });
    await expectPaidOnce(p);
    expect(await post(p.token, genuine.get(prompt.checkoutRequestId)!)).toBe(200);
    expect(await counted(p.linkId)).toHaveLength(1);
  });
});

describe('the audit', () => {
  it('counts every genuine payment exactly once and no forged one', async () => {
    const audit = await auditPayments({ databaseUrl: h.stack.config.databaseUrl!, temporal: h.stack.temporal, made, delivered: [], deliveredStores: [] });
    expect({ problems: audit.problems, doubleConfirmed: audit.doubleConfirmed, lost: audit.paymentsLost, confirmedOnce: audit.confirmedOnce }).toEqual({
      problems: [], doubleConfirmed: 0, lost: 0, confirmedOnce: made.length,
    });
    const paid = await h.stack.pool.anyFirst(sql.type(z.object({ id: z.string() }))`
      SELECT link_id AS id FROM link_payments WHERE state = 'confirmed' AND link_id = ANY(${sql.array(neverPaid, 'text')})`);
    expect(paid).toEqual([]);
    expect(counts.http5xx).toBe(0);
  });
});
