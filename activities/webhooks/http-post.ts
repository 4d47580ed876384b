import { request as httpRequest, type IncomingMessage } from 'node:http';
import { request as httpsRequest } from 'node:https';
import type { LookupFunction } from 'node:net';
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
  pinned: PinnedAddress | undefined;
  timeoutMs?: number;
  /** The activity's cancellation: a worker shutting down aborts the request. */
  signal?: AbortSignal;
}

/**
 * One POST, no redirects followed (Node's http client never follows them; a 3xx is reported as
 * it came), no connection reuse (each attempt dials the address the policy just checked), and a
 * deadline covering the whole exchange.
 */
export function postWebhook(req: PostRequest): Promise<PostResult> {
  const timeoutMs = req.timeoutMs ?? attemptTimeoutMs;
  const timeout = AbortSignal.timeout(timeoutMs);
  const signal = req.signal ? AbortSignal.any([timeout, req.signal]) : timeout;
  const started = performance.now();
  return new Promise((resolve) => {
    let done = false;
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
        agent: false,
        signal,
        lookup: req.pinned ? pinnedLookup(req.pinned) : undefined,
      },
      (res) => readResponse(res, finish, (err) => fail(err, res.statusCode ?? null)),
    );
    outgoing.on('error', (err) => fail(err));
    outgoing.end(req.body);
  });
}

function readResponse(res: IncomingMessage, finish: (r: Omit<PostResult, 'latencyMs'>) => void, fail: (err: Error) => void): void {
  const chunks: Buffer[] = [];
  let size = 0;
  const complete = () =>
    finish({
      status: res.statusCode ?? null,
      body: Buffer.concat(chunks).toString('utf8').slice(0, storedBodyChars),
      error: null,
      location: typeof res.headers.location === 'string' ? res.headers.location : null,
    });
  res.on('data', (chunk: Buffer) => {
    chunks.push(chunk);
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

/** Hands the connection the address that was checked, whatever the resolver would say now. */
function pinnedLookup(p: PinnedAddress): LookupFunction {
  return ((_host: string, options: { all?: boolean }, cb: (...args: unknown[]) => void) => {
    if (options?.all) cb(null, [{ address: p.address, family: p.family }]);
    else cb(null, p.address, p.family);
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
