import { createServer, type IncomingMessage, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';
import {
  asText, checkPassword, checkPushFields, checkTimestamp, invalidToken, isRefusal, merchantDoesNotExist,
  spikeArrest, subscriberLocked, unknownCheckoutRequest, wrongCredentials, type Refusal,
} from './checks.js';
import { handleControl } from './control.js';
import { DarajaState, newRequestId, type DarajaFailure, type EmulatorMerchant, type PhoneScript, type Prompt } from './state.js';
import { errorBody, oauthBody, pushAcceptedBody, queryPendingBody, queryResultBody, type CallbackResult } from './templates.js';

export type { EmulatorMerchant, PhoneScript, Prompt } from './state.js';
export type { CallbackResult } from './templates.js';

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

  const server = createServer((req, res) => {
    const url = new URL(req.url ?? '/', 'http://daraja.local');
    // 'close' also fires for a dropped connection, logged with status 0.
    res.on('close', () => requests.push({ method: req.method ?? '', path: url.pathname, status: res.writableFinished ? res.statusCode : 0 }));
    void route(req, res, url).catch((err) => send(res, 500, errorBody(newRequestId(), '500.003.1001', `Internal Server Error: ${(err as Error).message}`)));
  });

  const route = async (req: IncomingMessage, res: ServerResponse, url: URL) => {
    const raw = await readBody(req);
    if (url.pathname.startsWith('/_emulator/')) return handleControl(url, req.method ?? '', raw, res, { state, complete });
    const operator = ['/oauth/v1/generate', '/mpesa/stkpush/v1/processrequest', '/mpesa/stkpushquery/v1/query'];
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
    return url.pathname.includes('stkpushquery') ? query(res, body) : push(res, body);
  };

  await new Promise<void>((resolve) => server.listen(opts.port ?? 0, opts.host ?? '127.0.0.1', resolve));
  const { port } = server.address() as AddressInfo;
  return {
    url: `http://${opts.host ?? '127.0.0.1'}:${port}`,
    state,
    requests,
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
