import { request as httpRequest } from 'node:http';
import { join } from 'node:path';
import { pino, type Logger } from 'pino';
import pg from 'pg';
import type { Client } from '@temporalio/client';
import { loggerOptions } from '../../../api/plugins/log-redaction.js';
import { errorCodes, errorTypeForStatus } from '../../../domain/errors.js';
import type { EmulatorMerchant } from '../../../emulators/daraja/server.js';
import { connectBody } from '../../helpers/daraja.js';
import { randomAccountXpubs, solanaWallet } from '../../helpers/fixtures.js';
import { startStack, type Stack } from '../../helpers/stack.js';
import { dumpDatabase } from '../harness/evidence.js';
import { artifactDir } from '../harness/report.js';

/**
 * Shared by the hostile-input scenarios (fuzz-endpoints, auth-matrix, forged-callbacks,
 * webhook-ssrf): the real stack with its request log kept as evidence, the route list read from
 * the app itself, a fingerprint of every table (to prove a refused request wrote nothing), a
 * count of the Temporal workflows the app starts, and the documented error body.
 */

export interface HostileStack {
  stack: Stack;
  dir: string;
  logger: Logger;
  /** Dumps the database into the artifacts (before the stack drops it), then stops everything. */
  finish(): Promise<void>;
}

/** startStack with a real pino logger at level info writing the app's request log to `<artifacts>/api.log`. */
export async function startHostileStack(scenario: string, env: Record<string, string> = {}): Promise<HostileStack> {
  const dir = await artifactDir(scenario);
  const logger = pino(loggerOptions('info'), pino.destination({ dest: join(dir, 'api.log'), sync: true }));
  const stack = await startStack(env, { logger });
  let finished = false;
  return {
    stack,
    dir,
    logger,
    async finish() {
      if (finished) return;
      finished = true;
      try {
        await dumpDatabase(stack.config.databaseUrl!, join(dir, 'app.sql'));
      } finally {
        await stack.stop();
        logger.flush();
      }
    },
  };
}

// ---------------------------------------------------------------------------------------------
// Routes, as the app registered them

export interface AppRoute {
  method: 'GET' | 'POST' | 'PUT' | 'DELETE' | 'PATCH';
  /** Fastify's pattern: `/v1/payment-links/:id`. */
  url: string;
}

/**
 * Every route the app serves (HEAD and OPTIONS left out), read from Fastify's own route tree
 * (`printRoutes`): a route added to the app is covered without editing the suite.
 */
export function appRoutes(app: Stack['app']): AppRoute[] {
  const tree = app.printRoutes({ commonPrefix: true });
  const segments: string[] = [];
  const out: AppRoute[] = [];
  for (const line of tree.split('\n')) {
    const m = /^((?:[│ ] {3})*)(?:[├└]── )(.*)$/.exec(line);
    if (!m) continue;
    const depth = m[1]!.length / 4;
    const text = m[2]!;
    const methods = /^(.*?) \(([A-Z, ]+)\)$/.exec(text);
    segments.length = depth;
    segments[depth] = methods ? methods[1]! : text;
    if (!methods) continue;
    const url = segments.join('');
    for (const method of methods[2]!.split(', ')) {
      if (method === 'HEAD' || method === 'OPTIONS') continue;
      out.push({ method: method as AppRoute['method'], url });
    }
  }
  return out.sort((a, b) => `${a.url} ${a.method}`.localeCompare(`${b.url} ${b.method}`));
}

export const routeName = (r: AppRoute): string => `${r.method} ${r.url}`;

/** The `:name` parameters of a route pattern (and `*` as `'*'`). */
export function pathParams(url: string): string[] {
  return [...url.matchAll(/:([A-Za-z]+)|\*/g)].map((m) => m[1] ?? '*');
}

/** The pattern with each parameter replaced by the (already percent-encoded) value given. */
export function fillPath(url: string, values: Record<string, string>): string {
  return url.replace(/:([A-Za-z]+)|\*/g, (_m, name: string | undefined) => values[name ?? '*'] ?? 'x');
}

// ---------------------------------------------------------------------------------------------
// Raw HTTP: exactly the bytes, headers and client address a hostile client chooses

export interface RawRequest {
  method: string;
  /** Path and query, sent as is (already percent-encoded, or deliberately not). */
  path: string;
  headers?: Record<string, string | string[]>;
  body?: string | Buffer;
  /** A loopback source address (127.x.y.z): spreads requests over client IPs so per-IP limits do not hide validation. */
  localAddress?: string;
}

export interface RawResponse {
  status: number;
  headers: Record<string, string | string[] | undefined>;
  text: string;
  json: unknown;
}

export function send(baseUrl: string, req: RawRequest): Promise<RawResponse> {
  const base = new URL(baseUrl);
  // Framed with Content-Length, whatever the method: a DELETE body is otherwise sent unframed.
  const headers = req.body === undefined ? req.headers : { ...req.headers, 'content-length': String(Buffer.byteLength(req.body)) };
  return new Promise((resolve, reject) => {
    const r = httpRequest(
      { host: base.hostname, port: base.port, method: req.method, path: req.path, headers, localAddress: req.localAddress, agent: false },
      (res) => {
        const chunks: Buffer[] = [];
        res.on('data', (c: Buffer) => chunks.push(c));
        res.on('end', () => {
          const text = Buffer.concat(chunks).toString('utf8');
          let json: unknown;
          try {
            json = text ? JSON.parse(text) : undefined;
          } catch {
            json = undefined;
          }
          resolve({ status: res.statusCode ?? 0, headers: res.headers, text, json });
        });
        res.on('error', reject);
      },
    );
    r.on('error', reject);
    if (req.body !== undefined) r.write(req.body);
    r.end();
  });
}

let ipCounter = 0;
/** The next loopback client address: 127.1.0.1, 127.1.0.2, … (each gets its own rate-limit window). */
export function nextClientIp(): string {
  ipCounter++;
  return `127.${1 + ((ipCounter >> 16) & 0x3f)}.${(ipCounter >> 8) & 0xff}.${(ipCounter & 0xff) || 1}`;
}

// ---------------------------------------------------------------------------------------------
// The documented error body (docs/api.md, "Errors"; docs/contracts.md)

/** Codes the error handler adds to the catalog for transport-level refusals. */
const transportCodes: Record<string, number> = {
  invalid_content_type: 415, body_too_large: 413, not_found: 404, headers_too_large: 431, malformed_request: 400,
};

/**
 * Why `res` is not the documented JSON error body for its status, or null when it is:
 * `{"error":{"type","code","message","param"?,"requestId"}}`, nothing else, the type matching
 * the status, the code one of the catalog's with that status, the request id echoed in `x-request-id`.
 */
export function errorBodyProblem(res: RawResponse): string | null {
  const body = res.json as { error?: Record<string, unknown> } | undefined;
  if (!body || typeof body !== 'object' || !body.error || typeof body.error !== 'object') return `not the error body: ${res.text.slice(0, 200)}`;
  const extraTop = Object.keys(body).filter((k) => k !== 'error');
  if (extraTop.length > 0) return `extra top-level fields ${extraTop.join(', ')}`;
  const e = body.error;
  const extra = Object.keys(e).filter((k) => !['type', 'code', 'message', 'param', 'requestId'].includes(k));
  if (extra.length > 0) return `extra error fields ${extra.join(', ')}`;
  if (typeof e.code !== 'string' || typeof e.message !== 'string' || typeof e.requestId !== 'string') return 'code, message or requestId missing';
  if (e.param !== undefined && typeof e.param !== 'string') return 'param is not a string';
  const expectedType = errorTypeForStatus([413, 415, 431].includes(res.status) ? 400 : res.status);
  if (e.type !== expectedType) return `type ${String(e.type)} for status ${res.status}`;
  const codeStatus = (errorCodes as Record<string, number>)[e.code] ?? transportCodes[e.code];
  if (codeStatus !== res.status) return `code ${e.code} with status ${res.status}`;
  // A replayed Idempotency-Key answer is the first answer verbatim (docs/api.md, "Idempotency"), its request id included.
  if (res.headers['x-request-id'] !== e.requestId && res.headers['idempotent-replayed'] !== 'true') return 'requestId differs from x-request-id';
  return null;
}

// ---------------------------------------------------------------------------------------------
// What a request changed: every table's rows, and the workflows started or signalled

/** Columns that record reads, not writes (a key's last use): left out of the fingerprint. */
const bookkeepingColumns = new Set(['api_keys.last_used_at']);
/** Caches a read may fill (an operator token, a rate reading): counted by rows only. */
const cacheTables = new Set(['mobile_money_tokens', 'kes_rate_reference']);

/**
 * A fingerprint of every table of the app's database: its row count and an md5 of its rows (so
 * an update shows too), bookkeeping columns left out. One query; cheap on a test database.
 */
export class TableFingerprint {
  private query = '';
  private constructor(private client: pg.Client) {}

  static async open(databaseUrl: string): Promise<TableFingerprint> {
    const client = new pg.Client({ connectionString: databaseUrl });
    await client.connect();
    const fp = new TableFingerprint(client);
    const cols = await client.query<{ t: string; c: string }>(
      `SELECT table_name AS t, column_name AS c FROM information_schema.columns
        WHERE table_schema = 'public' AND table_name IN (SELECT table_name FROM information_schema.tables WHERE table_schema = 'public' AND table_type = 'BASE TABLE')
        ORDER BY table_name, ordinal_position`,
    );
    const byTable = new Map<string, string[]>();
    for (const { t, c } of cols.rows) {
      if (bookkeepingColumns.has(`${t}.${c}`)) continue;
      byTable.set(t, [...(byTable.get(t) ?? []), c]);
    }
    const parts = [...byTable].map(([t, cs]) => {
      const ident = (s: string) => `"${s.replace(/"/g, '""')}"`;
      const hash = cacheTables.has(t)
        ? `''`
        : `(SELECT coalesce(md5(string_agg(x::text, '|' ORDER BY x::text)), '') FROM (SELECT ${cs.map(ident).join(', ')} FROM ${ident(t)}) x)`;
      return `'${t}', (SELECT count(*) FROM ${ident(t)})::text || ':' || ${hash}`;
    });
    fp.query = `SELECT json_build_object(${parts.join(', ')}) AS f`;
    return fp;
  }

  async take(): Promise<Record<string, string>> {
    const res = await this.client.query<{ f: Record<string, string> }>(this.query);
    return res.rows[0]!.f;
  }

  async close(): Promise<void> {
    await this.client.end();
  }

  /** The tables whose rows differ between two fingerprints, except those in `allowed`. */
  static changed(before: Record<string, string>, after: Record<string, string>, allowed: ReadonlySet<string> = new Set()): string[] {
    return Object.keys({ ...before, ...after }).filter((t) => !allowed.has(t) && before[t] !== after[t]);
  }
}

/**
 * Counts every workflow the app's Temporal client starts and every signal, termination or
 * cancellation it sends (the API and the activities share this client): a refused request must
 * send none. Updates are not counted: a refused update (its validator said no) writes nothing,
 * and an accepted one shows in the tables.
 */
export function countTemporalWrites(client: Client): { readonly count: number } {
  const counter = { count: 0 };
  const wf = client.workflow as unknown as Record<string, (...args: unknown[]) => unknown>;
  const start = wf.start!.bind(client.workflow);
  wf.start = (...args: unknown[]) => {
    counter.count++;
    return start(...args);
  };
  for (const name of ['signalWithStart', 'execute']) {
    const original = wf[name];
    if (typeof original !== 'function') continue;
    const bound = original.bind(client.workflow);
    wf[name] = (...args: unknown[]) => {
      counter.count++;
      return bound(...args);
    };
  }
  const getHandle = wf.getHandle!.bind(client.workflow);
  wf.getHandle = (...args: unknown[]) => {
    const handle = getHandle(...args) as Record<string, unknown>;
    for (const name of ['signal', 'terminate', 'cancel']) {
      const original = handle[name];
      if (typeof original !== 'function') continue;
      handle[name] = (...a: unknown[]) => {
        counter.count++;
        return (original as (...x: unknown[]) => unknown).apply(handle, a);
      };
    }
    return handle;
  };
  return counter;
}

/**
 * Waits until the database stops changing (two equal fingerprints `gapMs` apart), after a
 * request that did write: a workflow it started may still be writing, and that must not be
 * blamed on the next request.
 */
export async function settle(fp: TableFingerprint, gapMs = 150, timeoutMs = 5_000): Promise<Record<string, string>> {
  const deadline = Date.now() + timeoutMs;
  let last = await fp.take();
  for (;;) {
    await new Promise((r) => setTimeout(r, gapMs));
    const now = await fp.take();
    if (TableFingerprint.changed(last, now).length === 0 || Date.now() > deadline) return now;
    last = now;
  }
}

export const pause = (ms: number): Promise<void> => new Promise((r) => setTimeout(r, ms));

/** A JSON call with a secret key that must succeed (set-up, not the thing under test). */
export function apiCaller(stack: Stack, key: string) {
  return async (method: string, url: string, payload?: unknown, k = key) => {
    const res = await stack.request({ method, url, key: k, payload });
    if (res.status >= 300) throw new Error(`${method} ${url}: ${res.status} ${res.text}`);
    return res.body;
  };
}

/** Registers fresh TRON and EVM xpubs (returned) and a Solana wallet, and connects M-Pesa, through the API. */
export async function connectEveryRail(api: ReturnType<typeof apiCaller>, clientId: string, merchant: EmulatorMerchant): Promise<{ evm: string; tron: string }> {
  const xpubs = randomAccountXpubs();
  await api('PUT', `/v1/merchant/clients/${clientId}/wallets/evm`, { xpub: xpubs.evm });
  await api('PUT', `/v1/merchant/clients/${clientId}/wallets/tron`, { xpub: xpubs.tron });
  await api('PUT', `/v1/merchant/clients/${clientId}/wallets/solana`, { address: solanaWallet });
  await api('POST', `/v1/merchant/clients/${clientId}/mobile-money/connect`, connectBody(merchant));
  return xpubs;
}
