import { createServer, type IncomingMessage, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';
import { Ledger } from './ledger.js';
import { methods, RpcError } from './rpc.js';

/**
 * A stand-in for a Solana RPC node: JSON-RPC 2.0 over HTTP POST, answering the read methods the
 * watcher and `@solana/web3.js` use (getSignaturesForAddress, getTransaction, getSignatureStatuses,
 * getSlot, plus getHealth and getVersion) in the shapes documented at solana.com/docs/rpc. The
 * test drives the cluster through `ledger` (transfers, finality, abandoned forks) and reads
 * `calls` to see what was asked.
 */
export interface SolanaEmulator {
  url: string;
  ledger: Ledger;
  /** Requests answered so far, by method. */
  readonly calls: Readonly<Record<string, number>>;
  close(): Promise<void>;
}

interface Request {
  jsonrpc?: unknown;
  id?: unknown;
  method?: unknown;
  params?: unknown;
}

const failure = (id: unknown, code: number, message: string, data?: unknown) => ({
  jsonrpc: '2.0',
  error: { code, message, ...(data === undefined ? {} : { data }) },
  id: id ?? null,
});

function answer(ledger: Ledger, calls: Record<string, number>, req: Request): unknown {
  if (typeof req !== 'object' || req === null || req.jsonrpc !== '2.0' || typeof req.method !== 'string') {
    return failure(req?.id, -32600, 'Invalid request');
  }
  const method = methods[req.method];
  if (!method) return failure(req.id, -32601, 'Method not found');
  if (req.params !== undefined && !Array.isArray(req.params)) return failure(req.id, -32602, 'Invalid params: expected an array');
  calls[req.method] = (calls[req.method] ?? 0) + 1;
  try {
    return { jsonrpc: '2.0', result: method(ledger, (req.params as unknown[] | undefined) ?? []), id: req.id };
  } catch (err) {
    if (err instanceof RpcError) return failure(req.id, err.code, err.message, err.data);
    return failure(req.id, -32603, 'Internal error');
  }
}

async function readBody(req: IncomingMessage): Promise<string> {
  const chunks: Buffer[] = [];
  for await (const chunk of req) chunks.push(chunk as Buffer);
  return Buffer.concat(chunks).toString('utf8');
}

export async function startSolanaEmulator(opts: { host?: string; port?: number; ledger?: Ledger } = {}): Promise<SolanaEmulator> {
  const ledger = opts.ledger ?? new Ledger();
  const calls: Record<string, number> = {};
  const reply = (res: ServerResponse, status: number, body: unknown) => {
    res.writeHead(status, { 'content-type': 'application/json' });
    res.end(JSON.stringify(body));
  };
  const server = createServer((req, res) => {
    if (req.method !== 'POST') {
      res.writeHead(405, { allow: 'POST' }).end();
      return;
    }
    readBody(req).then((text) => {
      let body: unknown;
      try {
        body = JSON.parse(text);
      } catch {
        return reply(res, 200, failure(null, -32700, 'Parse error'));
      }
      if (Array.isArray(body)) {
        if (body.length === 0) return reply(res, 200, failure(null, -32600, 'Invalid request'));
        return reply(res, 200, body.map((r) => answer(ledger, calls, r as Request)));
      }
      return reply(res, 200, answer(ledger, calls, body as Request));
    }, () => res.destroy());
  });
  await new Promise<void>((resolve) => server.listen(opts.port ?? 0, opts.host ?? '127.0.0.1', resolve));
  const { address, port } = server.address() as AddressInfo;
  return {
    url: `http://${address}:${port}`,
    ledger,
    calls,
    close: () =>
      new Promise<void>((resolve, reject) => {
        server.closeAllConnections();
        server.close((err) => (err ? reject(err) : resolve()));
      }),
  };
}
