import { randomUUID } from 'node:crypto';
import type { Address } from 'viem';
import type { DarajaEmulator } from '../../emulators/daraja/server.js';
import type { TestToken } from '../helpers/anvil.js';
import { httpCall, type HttpRequest, type HttpResponse } from '../helpers/http.js';
import type { MadePayment } from './harness/audit.js';

/**
 * The customers (and their merchant's server) of the chaos scenarios, as real clients behave:
 * every call goes over HTTP to the running service; a connection refused or cut (the service is
 * being killed) is retried until a deadline; a link is created with an Idempotency-Key that every
 * retry repeats; a customer pays once the phone rings or the address is known, and the payment
 * counts as made only when the money left (a prompt accepted, a transfer mined).
 */
export interface Shop {
  /** Where the API answers (changes never: a restarted service listens on the same port). */
  baseUrl: string;
  secretKey: string;
  daraja: DarajaEmulator;
  token: TestToken;
  /** 18-decimal USDT on the BSC rail. */
  decimals: number;
  /** The merchant's server: the address its API calls come from. */
  merchantIp?: string;
  /** Trusted-proxy mode: the customer's address travels in X-Forwarded-For instead of the socket. */
  forwardedFor?: boolean;
  /** How long a customer keeps retrying one step before giving up. */
  stepTimeoutMs: number;
  /** Every answer the API gave, for counting (5xx, 429, …). */
  onAnswer(res: HttpResponse, req: HttpRequest): void;
  made: MadePayment[];
}

export type CustomerPath = 'mpesa' | 'usdt' | 'cancel-race' | 'idempotent-retry' | 'abandon-cancel';

export interface CustomerResult {
  path: CustomerPath;
  linkId: string;
  merchantRef: string;
  /** Every link id the create answers named (more than one is a duplicate link). */
  createdIds: Set<string>;
  /** Each Idempotency-Key replay the client saw (`idempotent-replayed: true`). */
  replays: number;
  checkoutRequestIds: string[];
  /** From the money leaving the customer to the checkout showing the final state (when polled). */
  settleMs?: number;
  /** The state the checkout showed last (when polled). */
  finalStatus?: string;
}

const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

/** The payer wallets' pending sends, one after another per account. */
const walletQueues = new Map<Address, Promise<void>>();

/** Errors that mean "the service is not there right now", not "the service answered". */
function isConnectionError(err: unknown): boolean {
  const code = (err as { code?: string }).code;
  return ['ECONNREFUSED', 'ECONNRESET', 'EPIPE', 'ETIMEDOUT', 'EADDRNOTAVAIL'].includes(code ?? '') || /socket hang up/.test((err as Error).message);
}

export class ShopClient {
  constructor(readonly shop: Shop) {}

  /** One HTTP call; connection failures are retried (with the same body and headers) until `deadline`. */
  async call(req: HttpRequest & { key?: string; ip?: string }, deadline = Date.now() + this.shop.stepTimeoutMs): Promise<HttpResponse> {
    const headers: Record<string, string> = { ...(req.key ? { 'x-api-key': req.key } : {}), ...req.headers };
    const ip = req.ip ?? this.shop.merchantIp;
    const viaProxy = this.shop.forwardedFor && ip;
    if (viaProxy) headers['x-forwarded-for'] = ip;
    const full: HttpRequest = { method: req.method, url: req.url, payload: req.payload, headers, localAddress: viaProxy ? undefined : ip };
    for (let wait = 100; ; wait = Math.min(wait * 2, 1_000)) {
      try {
        const res = await httpCall(this.shop.baseUrl, full);
        this.shop.onAnswer(res, full);
        return res;
      } catch (err) {
        if (!isConnectionError(err) || Date.now() + wait > deadline) throw err;
        await sleep(wait);
      }
    }
  }

  /**
   * Creates a link as a merchant's server does: one Idempotency-Key for the order, repeated on
   * every retry (connection lost, 409 in progress, 5xx) until a 201 or a replay answers.
   */
  async createLink(body: Record<string, unknown>, idempotencyKey: string, result: Pick<CustomerResult, 'createdIds' | 'replays'>): Promise<any> {
    const deadline = Date.now() + this.shop.stepTimeoutMs;
    for (;;) {
      const res = await this.call({ method: 'POST', url: '/v1/payment-links', key: this.shop.secretKey, headers: { 'idempotency-key': idempotencyKey }, payload: body }, deadline);
      if (res.status === 201) {
        result.createdIds.add(res.body.id);
        if (res.headers['idempotent-replayed'] === 'true') result.replays++;
        return res.body;
      }
      const retryable = res.status >= 500 || (res.status === 409 && res.body?.error?.code === 'idempotency_request_in_progress') || res.status === 429;
      if (!retryable || Date.now() > deadline) throw new Error(`create link: ${res.status} ${res.text}`);
      await sleep(Math.min(Number(res.headers['retry-after'] ?? 1) * 1000, 2_000));
    }
  }

  /** The hosted checkout: the page, then its data, as the browser fetches them. */
  async openCheckout(linkId: string, ip: string): Promise<any> {
    const page = await this.call({ method: 'GET', url: `/p/${linkId}`, ip });
    if (page.status !== 200) throw new Error(`checkout page ${linkId}: ${page.status}`);
    return this.checkoutData(linkId, ip);
  }

  async checkoutData(linkId: string, ip: string): Promise<any> {
    const res = await this.call({ method: 'GET', url: `/v1/checkout/${linkId}`, ip });
    if (res.status !== 200) throw new Error(`checkout data ${linkId}: ${res.status} ${res.text}`);
    return res.body;
  }

  async getLink(linkId: string): Promise<any> {
    const res = await this.call({ method: 'GET', url: `/v1/payment-links/${linkId}`, key: this.shop.secretKey });
    if (res.status !== 200) throw new Error(`get link ${linkId}: ${res.status} ${res.text}`);
    return res.body;
  }

  /**
   * Pays by M-Pesa from the hosted checkout: presses "Send prompt" until the phone rings (a press
   * whose answer was lost may still have rung it), then accepts the prompt on the phone.
   */
  async payByMpesa(linkId: string, phone: string, ip: string, result: CustomerResult): Promise<void> {
    const { daraja } = this.shop;
    const deadline = Date.now() + this.shop.stepTimeoutMs;
    for (;;) {
      const ringing = daraja.state.openPromptFor(phone);
      if (ringing) {
        result.checkoutRequestIds.push(ringing.checkoutRequestId);
        this.shop.made.push({ linkId, rail: 'MOBILE_MONEY', expect: 'confirmed' });
        await daraja.complete(ringing.checkoutRequestId, 'success');
        return;
      }
      if (Date.now() > deadline) throw new Error(`the phone of ${linkId} never rang`);
      const res = await this.call({ method: 'POST', url: `/v1/checkout/${linkId}/pay/mobile-money`, ip, payload: { phoneNumber: phone } }, deadline).catch(() => undefined);
      if (res?.status === 429) await sleep(Math.min(Number(res.headers['retry-after'] ?? 1) * 1000, 5_000));
      else if (res?.status !== 200) await sleep(300); // 409: a prompt from a lost answer is being sent; 5xx: counted, pressed again
    }
  }

  /** Sends the link's amount in USDT to its BSC address; the payment is made once mined. */
  async payUsdt(linkId: string, address: Address, amount: bigint, payer: Address, expect: MadePayment['expect'] = 'confirmed'): Promise<string> {
    // A wallet sends one transaction at a time: two at once from one account would race for its nonce.
    const previous = walletQueues.get(payer) ?? Promise.resolve();
    const sending = previous.then(() => this.shop.token.transfer(payer, address, amount));
    walletQueues.set(payer, sending.then(() => undefined, () => undefined));
    const tx = await sending;
    this.shop.made.push({ linkId, rail: 'USDT_BSC', expect });
    return tx;
  }

  /** The merchant cancels; 200 or 409 (already paid or processing) are both answers. */
  async cancel(linkId: string): Promise<number> {
    const res = await this.call({ method: 'POST', url: `/v1/payment-links/${linkId}/cancel`, key: this.shop.secretKey, headers: { 'idempotency-key': `cancel-${linkId}` } });
    return res.status;
  }

  /** One customer on one path, from the order to the money leaving their hands. */
  async customer(
    path: CustomerPath,
    n: number,
    opts: { ip: string; phone: string; payer: Address; tag: string; thinkMs?: number; pollMs?: number },
  ): Promise<CustomerResult> {
    const merchantRef = `${opts.tag}-${n}`;
    const result: CustomerResult = { path, linkId: '', merchantRef, createdIds: new Set(), replays: 0, checkoutRequestIds: [] };
    const key = `order-${merchantRef}-${randomUUID()}`;
    const usdt = 1 + (n % 7);
    const body =
      path === 'mpesa'
        ? { mobileMoneyAmount: 50 + (n % 200), enabledRails: ['MOBILE_MONEY'], merchantRef, metadata: { path } }
        : { usdtAmount: String(usdt), enabledRails: ['USDT_BSC'], merchantRef, metadata: { path } };
    const link = await this.createLink(body, key, result);
    result.linkId = link.id;
    if (path === 'idempotent-retry') {
      // The merchant's server retries the very same order: the same link must come back.
      const again = await this.createLink(body, key, result);
      if (again.id !== link.id) result.createdIds.add(again.id);
    }
    const checkout = await this.openCheckout(link.id, opts.ip);
    if (opts.thinkMs) await sleep(opts.thinkMs);
    if (path === 'abandon-cancel') {
      // The customer leaves; the merchant cancels the order.
      const status = await this.cancel(link.id);
      if (status !== 200) throw new Error(`cancel of an untouched link ${link.id}: ${status}`);
      return result;
    }
    const address = (link.bscAddress ?? checkout.bscAddress) as Address;
    const amount = BigInt(usdt) * 10n ** BigInt(this.shop.decimals);
    if (path === 'mpesa') await this.payByMpesa(link.id, opts.phone, opts.ip, result);
    else if (path === 'cancel-race') {
      // The merchant's cancel lands anywhere from before the deposit is seen to after it confirms.
      const cancelAfterMs = (n * 797) % 4_000;
      await Promise.all([this.payUsdt(link.id, address, amount, opts.payer, 'confirmed-or-cancelled'), sleep(cancelAfterMs).then(() => this.cancel(link.id))]);
    }
    else await this.payUsdt(link.id, address, amount, opts.payer);
    if (opts.pollMs) await this.pollCheckout(result, opts.ip, opts.pollMs, path === 'cancel-race');
    return result;
  }

  /** The checkout page polling its data until the payment shows as final (the page polls every 4 s). */
  async pollCheckout(result: CustomerResult, ip: string, everyMs: number, mayCancel: boolean): Promise<void> {
    const paidAt = Date.now();
    const deadline = paidAt + this.shop.stepTimeoutMs;
    for (;;) {
      const data = await this.checkoutData(result.linkId, ip);
      result.finalStatus = data.status;
      if (data.status === 'CONFIRMED' || (mayCancel && data.status === 'CANCELLED')) {
        result.settleMs = Date.now() - paidAt;
        return;
      }
      if (Date.now() > deadline) throw new Error(`${result.linkId} still ${data.status} ${this.shop.stepTimeoutMs} ms after paying`);
      await sleep(everyMs);
    }
  }

  /**
   * Polls until every made payment has settled: CONFIRMED, or (raced with a cancel) CANCELLED.
   * Never throws on the deadline: the audit that follows says what did not settle.
   */
  async waitSettled(made: MadePayment[], deadlineMs: number, everyMs = 500): Promise<string[]> {
    const open = new Set(made.map((m) => m.linkId));
    const mayCancel = new Set(made.filter((m) => m.expect === 'confirmed-or-cancelled').map((m) => m.linkId));
    while (open.size > 0 && Date.now() < deadlineMs) {
      for (const id of [...open]) {
        const link = await this.getLink(id).catch(() => undefined);
        if (link?.status === 'CONFIRMED' || (link?.status === 'CANCELLED' && mayCancel.has(id) && link.payments?.length > 0)) open.delete(id);
        // One merchant server stays under its per-IP limit (600 a minute on this route).
        await sleep(120);
      }
      if (open.size > 0) await sleep(everyMs);
    }
    return [...open];
  }
}

/** Loopback addresses for distinct clients: 127.<a>.<b>.<c> from a number (never 127.0.0.1). */
export function clientIp(n: number, base = 10): string {
  return `127.${base}.${Math.floor(n / 250) % 250}.${(n % 250) + 2}`;
}

/** A fresh Kenyan phone per customer: Daraja locks a phone while its prompt is open. */
export function phoneOf(n: number, prefix = '2547'): string {
  return `${prefix}${String(n).padStart(8, '0')}`;
}
