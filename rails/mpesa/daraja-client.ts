import { classifyDarajaError, type DarajaError } from './daraja-errors.js';
import type { Environment } from '../../domain/environment.js';
import type { MpesaEndpoints } from '../settings.js';

/**
 * The wire to Daraja: OAuth and JSON POSTs, nothing else. Errors say whether the request may
 * have reached Daraja, because a prompt that may have been sent must never be sent again.
 */
const requestTimeoutMs = 20_000;

/** Daraja could not be reached. `maybeDelivered` is false only when the request provably never left. */
export class DarajaUnreachableError extends Error {
  constructor(message: string, readonly maybeDelivered: boolean) {
    super(message);
    this.name = 'DarajaUnreachableError';
  }
}

/** Daraja answered with an error. */
export class DarajaAnswerError extends Error {
  constructor(readonly answer: DarajaError) {
    super(`Daraja answered HTTP ${answer.httpStatus}${answer.errorCode ? ` ${answer.errorCode}` : ''}: ${answer.errorMessage}`);
    this.name = 'DarajaAnswerError';
  }
}

export function darajaBaseUrl(config: { readonly mpesa: MpesaEndpoints }, environment: Environment): string {
  return (environment === 'live' ? config.mpesa.liveUrl : config.mpesa.sandboxUrl).replace(/\/+$/, '');
}

export interface AccessToken {
  token: string;
  expiresInSeconds: number;
}

/** GET /oauth/v1/generate with Basic auth. Any non-200 is a refusal of the key and secret, except 5xx. */
export async function fetchAccessToken(baseUrl: string, consumerKey: string, consumerSecret: string): Promise<AccessToken> {
  const basic = Buffer.from(`${consumerKey}:${consumerSecret}`, 'utf8').toString('base64');
  const res = await send(`${baseUrl}/oauth/v1/generate?grant_type=client_credentials`, { method: 'GET', headers: { authorization: `Basic ${basic}` } }, false);
  if (res.status === 200 && res.json && typeof res.json === 'object') {
    const body = res.json as { access_token?: unknown; expires_in?: unknown };
    // expires_in is a string on the live API and a number in the documentation: Number() takes both.
    const expires = Number(body.expires_in);
    if (typeof body.access_token === 'string' && body.access_token !== '' && Number.isFinite(expires) && expires > 0) {
      return { token: body.access_token, expiresInSeconds: expires };
    }
  }
  const answer = classifyDarajaError(res.status, res.json ?? res.text);
  if (res.status === 200) throw new DarajaAnswerError({ ...answer, kind: 'unknown', errorMessage: 'the token answer has no access_token' });
  // No body is documented for a wrong key or secret, so every other refusal counts as one.
  const kind = res.status >= 500 || res.status === 429 ? 'busy' : 'credentials';
  throw new DarajaAnswerError({ ...answer, kind });
}

export interface JsonAnswer {
  status: number;
  json: unknown;
  text: string;
}

/** POST a JSON body with a bearer token; returns whatever came back (the caller classifies it). */
export function postJson(baseUrl: string, path: string, token: string, body: unknown): Promise<JsonAnswer> {
  return send(
    `${baseUrl}${path}`,
    { method: 'POST', headers: { authorization: `Bearer ${token}`, 'content-type': 'application/json' }, body: JSON.stringify(body) },
    true,
  );
}

async function send(url: string, init: RequestInit, hasEffect: boolean): Promise<JsonAnswer> {
  let res: Response;
  try {
    res = await fetch(url, { ...init, redirect: 'error', signal: AbortSignal.timeout(requestTimeoutMs) });
  } catch (err) {
    throw unreachable(err, hasEffect);
  }
  let text: string;
  try {
    text = await res.text();
  } catch (err) {
    throw unreachable(err, hasEffect);
  }
  let json: unknown = undefined;
  try {
    json = text ? JSON.parse(text) : undefined;
  } catch {
    // Gateway faults and some errors are not JSON; the caller sees the text.
  }
  return { status: res.status, json, text: text.slice(0, 2000) };
}

/** Connection refused, DNS failure or a connect timeout prove nothing was sent; anything later may have been. */
const notSentCodes = new Set(['ECONNREFUSED', 'ENOTFOUND', 'EAI_AGAIN', 'EHOSTUNREACH', 'ENETUNREACH', 'UND_ERR_CONNECT_TIMEOUT']);

function unreachable(err: unknown, hasEffect: boolean): DarajaUnreachableError {
  const cause = (err as { cause?: { code?: string } }).cause;
  const code = cause?.code ?? (err as { name?: string }).name ?? 'error';
  const notSent = code !== undefined && notSentCodes.has(code);
  return new DarajaUnreachableError(`Daraja could not be reached (${code}).`, hasEffect && !notSent);
}
