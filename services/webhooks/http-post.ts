import { Agent as HttpAgent, request as httpRequest, type IncomingMessage } from 'node:http';
import { Agent as HttpsAgent, request as httpsRequest } from 'node:https';
import type { LookupFunction } from 'node:net';
import { BoundedCache } from '../../domain/bounded-cache.js';
import type { PinnedAddress } from './destination.js';

/** Standard Webhooks: an endpoint has this long to answer, body included. */
export const attemptTimeoutMs = 10_000;
/** The response body kept in the delivery log (enough to see an error page's message). */
export const storedBodyChars = 1024;
const maxBodyBytes = 16 * 1024;

export interface PostResult {
  /** The HTTP status, or null when no response came (refused, timed out, TLS…). */
  status: number | null;
  body: string | null;
  latencyMs: number;
  error: string | null;
  location: string | null;
}

export interface PostRequest {
  url: URL;
  headers: Record<string, string>;
  body: string;
  /** The addresses the policy checked for this attempt: the only ones the request may connect to. */
  pinned: readonly PinnedAddress[];
  /**
   * false for an address inside a private network (allowed for test webhooks): the response is
   * read to its end but its body and Location are dropped, never kept, so an endpoint cannot be
   * used to read internal services. The status and the latency are kept.
   */
  revealResponse: boolean;
  timeoutMs?: number;
  /** The activity's cancellation: a worker shutting down aborts the request. */
  signal?: AbortSignal;
}

/**
 * Idle kept-alive connections close after this: below the 5 s Node's servers keep them and the
 * longer most proxies do, so the endpoint rarely closes one just as it is reused.
 */
export const idleConnectionMs = 4_000;
/** Connection pools kept at most; the least recently used is forgotten first (its idle connections close on their own). */
const pools = new BoundedCache<string, HttpAgent>(1_000);

/**
 * The kept-alive connections to exactly these checked addresses (with the protocol and port): a
 * connection is reused only by an attempt whose own check gave the same addresses, so every
 * request still goes to an address the policy approved for it. A fan-out sends many events to
 * each endpoint at once; dialling each attempt cost a fifth of the relay's CPU.
 */
function poolFor(url: URL, pinned: readonly PinnedAddress[]): HttpAgent {
  const key = `${url.protocol}//${url.port}/${pinned.map((p) => p.address).sort().join(',')}`;
  let pool = pools.get(key);
  if (!pool) {
    const options = { keepAlive: true, timeout: idleConnectionMs, maxFreeSockets: 16, scheduling: 'lifo' as const };
    pool = url.protocol === 'https:' ? new HttpsAgent(options) : new HttpAgent(options);
    pools.set(key, pool);
  }
  return pool;
}

/**
 * One POST, no redirects followed (Node's http client never follows them; a 3xx is reported as
 * it came), to the checked addresses only (a kept-alive connection is reused only for the same
 * checked addresses, `poolFor`), and a deadline covering the whole exchange. A reused connection
 * the endpoint closed before it answered anything is retried once on a new one (the same
 * request, the same webhook-id).
 */
export function postWebhook(req: PostRequest, fresh = false): Promise<PostResult> {
  const timeoutMs = req.timeoutMs ?? attemptTimeoutMs;
  const timeout = AbortSignal.timeout(timeoutMs);
  const signal = req.signal ? AbortSignal.any([timeout, req.signal]) : timeout;
  const started = performance.now();
  return new Promise((resolve) => {
    let done = false;
    let answered = false;
    const finish = (r: Omit<PostResult, 'latencyMs'>) => {
      if (done) return;
      done = true;
      resolve({ ...r, latencyMs: Math.round(performance.now() - started) });
    };
    const fail = (err: NodeJS.ErrnoException, status: number | null = null) =>
      finish({ status, body: null, error: describeError(err, timeout.aborted, timeoutMs), location: null });
    const send = req.url.protocol === 'https:' ? httpsRequest : httpRequest;
    const outgoing = send(
      req.url,
      {
        method: 'POST',
        headers: { ...req.headers, 'content-length': String(Buffer.byteLength(req.body)), 'user-agent': 'Malipo-Webhooks/1.0' },
        agent: fresh ? false : poolFor(req.url, req.pinned),
        signal,
        // IP literals are dialled as they are; names get the checked addresses instead of a DNS lookup.
        lookup: pinnedLookup(req.pinned),
      },
      (res) => {
        answered = true;
        readResponse(res, req.revealResponse, finish, (err) => fail(err, res.statusCode ?? null));
      },
    );
    outgoing.on('error', (err: NodeJS.ErrnoException) => {
      if (!done && !answered && !fresh && outgoing.reusedSocket && (err.code === 'ECONNRESET' || err.code === 'EPIPE') && !signal.aborted) {
        done = true;
        void postWebhook({ ...req, timeoutMs: Math.max(1, Math.floor(timeoutMs - (performance.now() - started))) }, true).then((r) =>
          resolve({ ...r, latencyMs: Math.round(performance.now() - started) }));
        return;
      }
      fail(err);
    });
    outgoing.end(req.body);
  });
}

function readResponse(
  res: IncomingMessage,
  reveal: boolean,
  finish: (r: Omit<PostResult, 'latencyMs'>) => void,
  fail: (err: Error) => void,
): void {
  const chunks: Buffer[] = [];
  let size = 0;
  const complete = () =>
    finish({
      status: res.statusCode ?? null,
      body: reveal ? Buffer.concat(chunks).toString('utf8').slice(0, storedBodyChars) : null,
      error: null,
      location: reveal && typeof res.headers.location === 'string' ? res.headers.location : null,
    });
  res.on('data', (chunk: Buffer) => {
    if (reveal) chunks.push(chunk);
    size += chunk.length;
    // Enough for the log: stop reading a huge body instead of waiting for all of it.
    if (size >= maxBodyBytes) {
      complete();
      res.destroy();
    }
  });
  res.on('end', complete);
  res.on('error', fail);
}

/** Hands the connection the addresses that were checked, whatever the resolver would say now. */
function pinnedLookup(pinned: readonly PinnedAddress[]): LookupFunction {
  return ((_host: string, options: { all?: boolean }, cb: (...args: unknown[]) => void) => {
    const [first] = pinned;
    if (!first) cb(Object.assign(new Error('no checked address to connect to'), { code: 'ENOTFOUND' }));
    else if (options?.all) cb(null, pinned.map((p) => ({ address: p.address, family: p.family })));
    else cb(null, first.address, first.family);
  }) as LookupFunction;
}

function describeError(err: NodeJS.ErrnoException, timedOut: boolean, timeoutMs: number): string {
  if (timedOut) return `timed out after ${timeoutMs / 1000} s without a complete response`;
  if (err.name === 'AbortError') return 'attempt cancelled (the worker was shutting down)';
  switch (err.code) {
    case 'ECONNREFUSED':
      return 'connection refused';
    case 'ECONNRESET':
      return 'connection reset by the endpoint';
    case 'ENOTFOUND':
    case 'EAI_AGAIN':
      return 'host not found';
    case 'EHOSTUNREACH':
    case 'ENETUNREACH':
      return 'host unreachable';
  }
  if (err.code && /CERT|TLS|SSL/.test(err.code)) return `TLS error: ${err.code}`;
  return err.message.slice(0, 200);
}
