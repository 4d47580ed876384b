import { createServer, type IncomingMessage, type ServerResponse } from 'node:http';
import { generateDynamicQr } from './dynamic-qr.js';
import type { AddressInfo } from 'node:net';
import {
  asText, checkPassword, checkPushFields, checkTimestamp, invalidToken, isRefusal, merchantDoesNotExist,
  spikeArrest, subscriberLocked, unknownCheckoutRequest, wrongCredentials, type Refusal,
} from './checks.js';
import { handleControl } from './control.js';
import { DarajaState, newRequestId, type DarajaFailure, type EmulatorMerchant, type PhoneScript, type Prompt } from './state.js';
import { c2bBody, postTo, registerUrl, simulateProblem, type C2bPayment, type C2bRegistration, type C2bScript, type SimulateInput } from './c2b.js';
import { queryPull, registerPull, type PullRegistration } from './pull.js';
import { errorBody, oauthBody, pushAcceptedBody, queryPendingBody, queryResultBody, type CallbackResult } from './templates.js';

export type { EmulatorMerchant, PhoneScript, Prompt } from './state.js';
export type { CallbackResult } from './templates.js';
export type { C2bPayment, C2bRegistration, C2bScript, SimulateInput } from './c2b.js';
export type { PullRegistration } from './pull.js';

export interface DarajaEmulatorOptions {
  merchants: EmulatorMerchant[];
  host?: string;
  port?: number;
  tokenTtlSeconds?: number;
  /** How far a request Timestamp may be from Kenyan time (Daraja publishes no window). Default 1 hour. */
  timestampToleranceSeconds?: number;
  /** Settle each prompt by itself after this long (demo mode). Unset: prompts wait for `complete()`. */
  autoCompleteMs?: number;
  /** Maps the CallBackURL to where the service really listens (what DNS and a proxy do in production). */
  deliverVia?: (callbackUrl: URL) => URL;
  now?: () => Date;
  /** False: the v2 Register URL path answers 404 (as where Daraja does not offer it), v1 still works. */
  c2bV2?: boolean;
  /** Shortcodes whose external validation Safaricom has not enabled: no validation post is made. */
  c2bWithoutValidation?: string[];
  /** Records per Pull Transactions query page (Daraja's is larger; tests page with small ones). */
  pullPageSize?: number;
}

export interface DarajaEmulator {
  url: string;
  state: DarajaState;
  /** Scripts how prompts to this phone end. */
  script(phone: string, script: Partial<PhoneScript>): void;
  /** Settles an open prompt and delivers its callback(s) as scripted; resolves after delivery. */
  complete(checkoutRequestId: string, result?: CallbackResult): Promise<Prompt>;
  /** Makes the next `n` operator calls fail: spike arrest (a 500 answer) or a dropped connection. */
  /**
   * The next n operator calls fail: `spike_arrest` (refused), `drop_connection` (closed before
   * reading: nothing happened), `lose_answer` (processed as usual, then the connection closes
   * before the answer: a prompt was sent, the caller never learns its id). With `path`, only
   * calls to that path (`/mpesa/stkpush/v1/processrequest`, say) take them.
   */
  failNext(n: number, kind: DarajaFailure, path?: string): void;
  /** Every issued token becomes invalid (as after an expiry): the next call gets 404.001.03. */
  revokeTokens(): void;
  /** Requests received, in order (method and path only; status 0 when the connection was dropped). */
  requests: { method: string; path: string; status: number }[];
  /** Registered C2B URLs by shortcode. */
  c2bRegistrations: Map<string, C2bRegistration>;
  /** How the next C2B confirmations are delivered (until changed). */
  c2bScript(script: C2bScript): void;
  /**
   * A customer pays from the M-Pesa menu (what Simulate starts): validation, then confirmation
   * posts to the registered URLs as scripted. Resolves once they were delivered.
   */
  c2bPay(input: SimulateInput & { transId?: string; paidAt?: Date }): Promise<C2bPayment>;
  c2bPayments: C2bPayment[];
  /** Shortcodes registered for Pull Transactions. */
  pullRegistrations: Map<string, PullRegistration>;
  close(): Promise<void>;
}

/**
 * A stand-in for Safaricom's Daraja (OAuth, M-Pesa Express push and query, callbacks) that
 * speaks its documented wire format and refuses what Daraja refuses (README.md beside this file).
 */
export async function startDarajaEmulator(opts: DarajaEmulatorOptions): Promise<DarajaEmulator> {
  const now = opts.now ?? (() => new Date());
  const state = new DarajaState(opts.merchants, opts.tokenTtlSeconds ?? 3599, now);
  const tolerance = opts.timestampToleranceSeconds ?? 3600;
  const requests: DarajaEmulator['requests'] = [];
  const timers = new Set<NodeJS.Timeout>();

  const deliver = async (prompt: Prompt, body: unknown): Promise<void> => {
    const target = opts.deliverVia ? opts.deliverVia(new URL(prompt.callbackUrl)) : new URL(prompt.callbackUrl);
    try {
      const res = await fetch(target, { method: 'POST', headers: { 'content-type': 'application/json' }, body: JSON.stringify(body) });
      await res.arrayBuffer();
      prompt.deliveries.push({ status: res.status });
    } catch (err) {
      prompt.deliveries.push({ status: null, error: (err as Error).message });
    }
  };

  const c2bRegistrations = new Map<string, C2bRegistration>();
  const c2bPayments: C2bPayment[] = [];
  let c2bScript: C2bScript = { confirmation: 'once' };
  const via = (url: string) => (opts.deliverVia ? opts.deliverVia(new URL(url)) : new URL(url));

  const pullRegistrations = new Map<string, PullRegistration>();
  const c2bPay = async (input: SimulateInput & { transId?: string; paidAt?: Date }): Promise<C2bPayment> => {
    const paidAt = input.paidAt ?? now();
    const body = c2bBody(input, paidAt, input.transId);
    const payment: C2bPayment = {
      transId: body.TransID!, shortCode: String(input.ShortCode), commandId: input.CommandID, amount: body.TransAmount!,
      msisdn: String(input.Msisdn), billRef: body.BillRefNumber!, outcome: 'completed', validation: null, deliveries: [], confirmation: body,
      paidAtMs: paidAt.getTime(),
    };
    c2bPayments.push(payment);
    const registration = c2bRegistrations.get(payment.shortCode);
    if (!registration) return payment;
    if (!(opts.c2bWithoutValidation ?? []).includes(payment.shortCode)) {
      payment.validation = await postTo(via(registration.validationUrl), body);
      const code = (payment.validation.body as { ResultCode?: unknown } | null)?.ResultCode;
      const answered = payment.validation.status !== null && payment.validation.status < 300 && code !== undefined;
      // Unreachable or unreadable: the registered ResponseType decides (Daraja's rule).
      if (answered ? String(code) !== '0' : registration.responseType === 'Cancelled') {
        payment.outcome = 'refused';
        return payment;
      }
    }
    const script = c2bScript;
    if (script.delayMs) await new Promise((r) => setTimeout(r, script.delayMs));
    const times = script.confirmation === 'none' ? 0 : script.confirmation === 'duplicate' ? 2 : 1;
    for (let i = 0; i < times; i++) payment.deliveries.push(await postTo(via(registration.confirmationUrl), body));
    if (script.alterAfter) payment.deliveries.push(await postTo(via(registration.confirmationUrl), { ...body, ...script.alterAfter }));
    return payment;
  };

  const complete = async (checkoutRequestId: string, result?: CallbackResult): Promise<Prompt> => {
    const prompt = state.prompts.get(checkoutRequestId);
    if (!prompt) throw new Error(`no prompt ${checkoutRequestId}`);
    if (prompt.state !== 'open') throw new Error(`prompt ${checkoutRequestId} is already settled`);
    const script = state.script(prompt.phone);
    const body = state.settle(prompt, result ?? script.result);
    const times = script.callback === 'none' ? 0 : script.callback === 'duplicate' ? 2 : 1;
    for (let i = 0; i < times; i++) await deliver(prompt, body);
    return prompt;
  };

  const send = (res: ServerResponse, status: number, body: unknown) => {
    res.writeHead(status, { 'content-type': 'application/json' }).end(JSON.stringify(body));
  };
  const refuse = (res: ServerResponse, r: Refusal) => send(res, r.status, errorBody(newRequestId(), r.errorCode, r.errorMessage));

  const oauth = (req: IncomingMessage, res: ServerResponse, url: URL) => {
    const auth = /^Basic ([A-Za-z0-9+/=]+)$/.exec(req.headers.authorization ?? '');
    if (!auth) return refuse(res, { status: 400, errorCode: '400.008.01', errorMessage: 'Invalid authentication type passed' });
    if (url.searchParams.get('grant_type') !== 'client_credentials') {
      return refuse(res, { status: 400, errorCode: '400.008.02', errorMessage: 'Invalid grant type passed' });
    }
    const decoded = Buffer.from(auth[1]!, 'base64').toString('utf8');
    const colon = decoded.indexOf(':');
    const [key, secret] = colon < 0 ? [decoded, ''] : [decoded.slice(0, colon), decoded.slice(colon + 1)];
    if (!state.app(key, secret)) return refuse(res, { status: 400, errorCode: '400.008.01', errorMessage: 'Invalid Authentication passed' });
    return send(res, 200, oauthBody(state.issueToken(key), state.tokenTtlSeconds));
  };

  /** The checks both M-Pesa Express calls share: merchant, timestamp, then the Password. */
  const authorizeMerchant = (b: Record<string, unknown>): Refusal | EmulatorMerchant => {
    const shortCode = asText(b.BusinessShortCode);
    if (!shortCode || !/^\d{5,7}$/.test(shortCode)) return { status: 400, errorCode: '400.002.02', errorMessage: 'Bad Request - Invalid BusinessShortCode' };
    const merchant = state.merchant(shortCode);
    if (!merchant) return merchantDoesNotExist;
    const ts = checkTimestamp(b.Timestamp, now(), tolerance);
    if (ts) return ts;
    if (!checkPassword(b.Password, shortCode, merchant.passkey, b.Timestamp as string)) return wrongCredentials;
    return merchant;
  };

  const push = async (res: ServerResponse, b: Record<string, unknown>) => {
    const fields = checkPushFields(b);
    if (isRefusal(fields)) return refuse(res, fields);
    const merchant = authorizeMerchant(b);
    if (isRefusal(merchant)) return refuse(res, merchant);
    if (state.openPromptFor(fields.phone)) return refuse(res, subscriberLocked);
    const tillOk = merchant.kind === 'till' ? (merchant.tills ?? []).includes(fields.partyB) : fields.partyB === merchant.shortCode;
    const typeOk = fields.transactionType === (merchant.kind === 'till' ? 'CustomerBuyGoodsOnline' : 'CustomerPayBillOnline');
    const prompt = state.newPrompt({
      merchant, phone: fields.phone, amount: fields.amount, callbackUrl: fields.callbackUrl, request: b,
      // Daraja accepts these and fails the payment later (research/daraja.md: SFC_IC0003, 2028).
      misconfigured: !tillOk ? { code: 'SFC_IC0003', desc: 'The operator does not exist.' }
        : !typeOk ? { code: 2028, desc: 'The request is not permitted according to product assignment.' } : null,
    });
    const delay = state.script(fields.phone).responseDelayMs ?? 0;
    if (delay > 0) await new Promise((r) => setTimeout(r, delay));
    if (opts.autoCompleteMs !== undefined) {
      const t = setTimeout(() => { timers.delete(t); void complete(prompt.checkoutRequestId).catch(() => undefined); }, opts.autoCompleteMs);
      timers.add(t);
    }
    return send(res, 200, pushAcceptedBody(prompt.merchantRequestId, prompt.checkoutRequestId));
  };

  const query = (res: ServerResponse, b: Record<string, unknown>) => {
    const merchant = authorizeMerchant(b);
    if (isRefusal(merchant)) return refuse(res, merchant);
    const prompt = typeof b.CheckoutRequestID === 'string' ? state.prompts.get(b.CheckoutRequestID) : undefined;
    // Daraja's answer for an id it never issued is not documented; this is the emulator's choice.
    if (!prompt || prompt.merchant !== merchant) return refuse(res, unknownCheckoutRequest);
    if (prompt.state === 'open') return send(res, 500, queryPendingBody(prompt.checkoutRequestId));
    return send(res, 200, queryResultBody(prompt.merchantRequestId, prompt.checkoutRequestId, prompt.result!.code, prompt.result!.desc));
  };

  const c2b = (res: ServerResponse, path: string, b: Record<string, unknown>) => {
    if (path.endsWith('/registerurl')) {
      const answer = registerUrl(opts.merchants, c2bRegistrations, b, path.includes('/v2/') ? 'v2' : 'v1');
      return send(res, answer.status, answer.body);
    }
    const problem = simulateProblem(b);
    if (problem) return refuse(res, { status: 400, errorCode: '400.002.02', errorMessage: problem });
    // Daraja answers at once; the posts to the registered URLs follow.
    void c2bPay(b as unknown as SimulateInput).catch(() => undefined);
    return send(res, 200, { OriginatorCoversationID: newRequestId(), ResponseCode: '0', ResponseDescription: 'Accept the service request successfully.' });
  };

  const server = createServer((req, res) => {
    const url = new URL(req.url ?? '/', 'http://daraja.local');
    // 'close' also fires for a dropped connection, logged with status 0.
    res.on('close', () => requests.push({ method: req.method ?? '', path: url.pathname, status: res.writableFinished ? res.statusCode : 0 }));
    void route(req, res, url).catch((err) => send(res, 500, errorBody(newRequestId(), '500.003.1001', `Internal Server Error: ${(err as Error).message}`)));
  });

  const route = async (req: IncomingMessage, res: ServerResponse, url: URL) => {
    const raw = await readBody(req);
    if (url.pathname.startsWith('/_emulator/')) return handleControl(url, req.method ?? '', raw, res, { state, complete });
    const operator = ['/oauth/v1/generate', '/mpesa/stkpush/v1/processrequest', '/mpesa/stkpushquery/v1/query', '/mpesa/c2b/v1/registerurl', '/mpesa/c2b/v1/simulate', '/mpesa/qrcode/v1/generate',
      '/pulltransactions/v1/register', '/pulltransactions/v1/query'];
    if (opts.c2bV2 !== false) operator.push('/mpesa/c2b/v2/registerurl');
    if (!operator.includes(url.pathname)) return refuse(res, { status: 404, errorCode: '404.001.01', errorMessage: 'Resource not found' });
    const at = state.failures.findIndex((f) => f.path === undefined || f.path === url.pathname);
    const failure = at < 0 ? undefined : state.failures.splice(at, 1)[0]!.kind;
    if (failure === 'drop_connection') return void req.socket.destroy();
    if (failure === 'spike_arrest') return refuse(res, spikeArrest);
    const expected = url.pathname === '/oauth/v1/generate' ? 'GET' : 'POST';
    if (req.method !== expected) return refuse(res, { status: 405, errorCode: '405.001', errorMessage: 'Method Not Allowed' });
    if (expected === 'GET') return oauth(req, res, url);
    if (!state.tokenValid(req.headers.authorization)) return refuse(res, invalidToken);
    // A missing or wrong Content-Type is documented to surface as "Invalid BusinessShortCode".
    const body = /^application\/json\b/.test(req.headers['content-type'] ?? '') ? parseObject(raw) : null;
    if (!body) return refuse(res, { status: 400, errorCode: '400.002.02', errorMessage: 'Bad Request - Invalid BusinessShortCode' });
    if (failure === 'lose_answer') loseAnswer(req, res);
    if (url.pathname.startsWith('/mpesa/c2b/')) return c2b(res, url.pathname, body);
    if (url.pathname === '/pulltransactions/v1/register') {
      const answer = registerPull(opts.merchants, pullRegistrations, body);
      return send(res, answer.status, answer.body);
    }
    if (url.pathname === '/pulltransactions/v1/query') {
      const answer = queryPull(pullRegistrations, c2bPayments, body, now(), opts.pullPageSize ?? 1000);
      return send(res, answer.status, answer.body);
    }
    if (url.pathname === '/mpesa/qrcode/v1/generate') {
      const answer = await generateDynamicQr(body, newRequestId());
      return send(res, answer.status, answer.body);
    }
    return url.pathname.includes('stkpushquery') ? query(res, body) : push(res, body);
  };

  await new Promise<void>((resolve) => server.listen(opts.port ?? 0, opts.host ?? '127.0.0.1', resolve));
  const { port } = server.address() as AddressInfo;
  return {
    url: `http://${opts.host ?? '127.0.0.1'}:${port}`,
    state,
    requests,
    c2bRegistrations,
    c2bPayments,
    pullRegistrations,
    c2bScript: (script) => void (c2bScript = script),
    c2bPay,
    script: (phone, s) => void state.scripts.set(phone, { ...state.script(phone), ...s }),
    complete,
    failNext: (n, kind, path) => { for (let i = 0; i < n; i++) state.failures.push({ kind, ...(path ? { path } : {}) }); },
    revokeTokens: () => state.revokeTokens(),
    async close() {
      for (const t of timers) clearTimeout(t);
      server.closeAllConnections();
      await new Promise<void>((resolve) => server.close(() => resolve()));
    },
  };
}

/** Whatever the handler answers is never sent: the connection closes instead. */
function loseAnswer(req: IncomingMessage, res: ServerResponse): void {
  res.writeHead = (() => res) as typeof res.writeHead;
  res.setHeader = (() => res) as typeof res.setHeader;
  res.end = (() => {
    req.socket.destroy();
    return res;
  }) as typeof res.end;
}

function readBody(req: IncomingMessage): Promise<string> {
  return new Promise((resolve, reject) => {
    const chunks: Buffer[] = [];
    let size = 0;
    req.on('data', (c: Buffer) => {
      size += c.length;
      if (size <= 64 * 1024) chunks.push(c);
    });
    req.on('end', () => resolve(Buffer.concat(chunks).toString('utf8')));
    req.on('error', reject);
  });
}

function parseObject(raw: string): Record<string, unknown> | null {
  try {
    const v = JSON.parse(raw) as unknown;
    return v && typeof v === 'object' && !Array.isArray(v) ? (v as Record<string, unknown>) : null;
  } catch {
    return null;
  }
}
