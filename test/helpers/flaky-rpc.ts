import { createServer, type IncomingMessage, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';

/**
 * A JSON-RPC proxy in front of a real node (anvil, or an emulator) that fails the calls a test
 * chooses, the ways providers do fail: an HTTP 500, no answer at all (the client times out), a
 * body that is not JSON, a `null` result (a lagging node that has not got the block yet), or
 * an answer rewritten by the test (e.g. a result array shorter than asked), or an answer held
 * until the test releases it (a slow node, without the client's timeout). Everything else is
 * forwarded untouched, to the same path, so the chain behind it stays the real one.
 */
export type Fault = 'http500' | 'timeout' | 'hold' | 'malformed' | 'null' | { rewrite(answer: RpcAnswer): unknown };

export interface RpcAnswer {
  jsonrpc: '2.0';
  id: unknown;
  result?: unknown;
  error?: unknown;
}

export interface FaultRule {
  method: string;
  /** Which calls of the method; all of them when absent. */
  when?: (params: unknown[]) => boolean;
  /** A fault, or faults taken in turn (one per matching call). */
  fault: Fault | Fault[];
  /** Fails only every n-th matching call (2: every other one); 1 when absent. */
  every?: number;
  /** Fails at most this many calls, then lets every call through; no limit when absent. */
  times?: number;
}

export interface RpcCall {
  method: string;
  params: unknown[];
  fault?: string;
}

export interface FlakyRpc {
  url: string;
  /** Adds a rule; returns a function that removes it. */
  fail(rule: FaultRule): () => void;
  clear(): void;
  /** Forwards every call held by a `hold` fault, as if the node had been slow. */
  release(): void;
  /** Every single (non-batch) call seen, in order, with the fault it got. */
  readonly calls: readonly RpcCall[];
  close(): Promise<void>;
}

/** `when` for calls whose first parameter is the given block number (hex quantity). */
export const atBlock = (n: bigint) => (params: unknown[]) => typeof params[0] === 'string' && /^0x[0-9a-f]+$/i.test(params[0]) && BigInt(params[0]) === n;

interface ActiveRule extends FaultRule {
  matched: number;
  failed: number;
}

async function readBody(req: IncomingMessage): Promise<string> {
  const chunks: Buffer[] = [];
  for await (const chunk of req) chunks.push(chunk as Buffer);
  return Buffer.concat(chunks).toString('utf8');
}

function faultName(f: Fault): string {
  return typeof f === 'string' ? f : 'rewrite';
}

export async function startFlakyRpc(upstreamUrl: string): Promise<FlakyRpc> {
  let rules: ActiveRule[] = [];
  const calls: RpcCall[] = [];
  let held: (() => void)[] = [];

  // The request's path goes along: TronGrid serves `/jsonrpc` and its HTTP API (`/walletsolidity/…`) side by side.
  const forward = async (text: string, path: string) => {
    const res = await fetch(`${upstreamUrl.replace(/\/$/, '')}${path === '/' ? '' : path}`, { method: 'POST', headers: { 'content-type': 'application/json' }, body: text });
    return { status: res.status, text: await res.text() };
  };

  /** The fault this call gets, if any: the first rule that matches and whose turn it is. */
  const pick = (method: string, params: unknown[]): Fault | undefined => {
    for (const rule of rules) {
      if (rule.method !== method || (rule.when && !rule.when(params))) continue;
      if (rule.times !== undefined && rule.failed >= rule.times) continue;
      const n = rule.matched++;
      if (n % (rule.every ?? 1) !== 0) return undefined;
      rule.failed++;
      const turn = Math.floor(n / (rule.every ?? 1));
      return Array.isArray(rule.fault) ? rule.fault[turn % rule.fault.length] : rule.fault;
    }
    return undefined;
  };

  const handle = async (req: IncomingMessage, res: ServerResponse) => {
    const text = await readBody(req);
    let body: { id?: unknown; method?: unknown; params?: unknown } | unknown[] | undefined;
    try {
      body = JSON.parse(text);
    } catch {
      body = undefined;
    }
    const single = body && !Array.isArray(body) && typeof body.method === 'string' ? body : undefined;
    const params = single && Array.isArray(single.params) ? (single.params as unknown[]) : [];
    const fault = single ? pick(single.method as string, params) : undefined;
    if (single) calls.push({ method: single.method as string, params, fault: fault && faultName(fault) });
    const json = (status: number, payload: string) => res.writeHead(status, { 'content-type': 'application/json' }).end(payload);
    if (fault === 'timeout') return; // never answered: the client's own timeout ends it
    if (fault === 'hold') await new Promise<void>((resolve) => held.push(resolve));
    if (fault === 'http500') return json(500, JSON.stringify({ jsonrpc: '2.0', id: single?.id ?? null, error: { code: -32603, message: 'internal error' } }));
    if (fault === 'malformed') return json(200, `{"jsonrpc":"2.0","id":${JSON.stringify(single?.id ?? null)},"result":{"number":`);
    if (fault === 'null') return json(200, JSON.stringify({ jsonrpc: '2.0', id: single?.id ?? null, result: null }));
    const upstream = await forward(text, req.url ?? '/');
    if (fault && typeof fault === 'object') return json(200, JSON.stringify(fault.rewrite(JSON.parse(upstream.text) as RpcAnswer)));
    return json(upstream.status, upstream.text);
  };

  const server = createServer((req, res) => {
    handle(req, res).catch(() => res.destroy());
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const { port } = server.address() as AddressInfo;
  return {
    url: `http://127.0.0.1:${port}`,
    fail(rule) {
      const active: ActiveRule = { ...rule, matched: 0, failed: 0 };
      rules.push(active);
      return () => {
        rules = rules.filter((r) => r !== active);
      };
    },
    clear() {
      rules = [];
    },
    release() {
      for (const resolve of held) resolve();
      held = [];
    },
    calls,
    close: () =>
      new Promise<void>((resolve, reject) => {
        server.closeAllConnections();
        server.close((err) => (err ? reject(err) : resolve()));
      }),
  };
}
