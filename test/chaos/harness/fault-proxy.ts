import { createServer, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';

/** How one proxied call fails: a 500, no answer at all (the caller's timeout ends it), or a body that is not JSON. */
export type HttpFault = 'http500' | 'timeout' | 'malformed';

interface QueuedFault {
  path: string;
  kind: HttpFault;
  resolve: () => void;
}

export interface FaultProxy {
  url: string;
  /**
   * The next `n` requests to `path` fail as `kind`. A malformed answer is given after the request
   * reached the upstream (the operator acted; only its answer is lost), a 500 and a timeout before.
   * Resolves once all `n` were taken.
   */
  failNext(path: string, kind: HttpFault, n?: number): Promise<void>;
  /** Faults queued and not yet taken. */
  pending(): number;
  /** Drops the faults not taken yet (their `failNext` never resolves). */
  clear(): void;
  close(): Promise<void>;
}

/**
 * A pass-through HTTP proxy in front of an upstream (the Daraja emulator) that fails chosen
 * calls the ways an operator's gateway does, beyond what the emulator scripts itself.
 */
export async function startFaultProxy(target: string): Promise<FaultProxy> {
  const queue: QueuedFault[] = [];
  const held = new Set<ServerResponse>();
  const take = (path: string) => {
    const i = queue.findIndex((q) => q.path === path);
    if (i < 0) return undefined;
    const [q] = queue.splice(i, 1);
    q!.resolve();
    return q!.kind;
  };
  const forward = async (method: string, url: string, headers: Record<string, string>, body: Buffer | undefined) => {
    const upstream = await fetch(new URL(url, target), { method, headers, body: body ? new Uint8Array(body) : undefined });
    return { status: upstream.status, type: upstream.headers.get('content-type') ?? 'application/json', body: Buffer.from(await upstream.arrayBuffer()) };
  };
  const server = createServer((req, res) => {
    const chunks: Buffer[] = [];
    req.on('data', (c: Buffer) => chunks.push(c));
    req.on('end', () => {
      const path = new URL(req.url ?? '/', 'http://proxy.local').pathname;
      const fault = take(path);
      if (fault === 'timeout') return void held.add(res);
      if (fault === 'http500') return void res.writeHead(500, { 'content-type': 'text/html' }).end('<html><body>502 Bad Gateway</body></html>');
      const headers: Record<string, string> = {};
      for (const name of ['content-type', 'authorization']) if (typeof req.headers[name] === 'string') headers[name] = req.headers[name] as string;
      forward(req.method ?? 'GET', req.url ?? '/', headers, chunks.length ? Buffer.concat(chunks) : undefined)
        .then((up) => {
          if (fault === 'malformed') return void res.writeHead(200, { 'content-type': 'application/json' }).end('{"ResponseCode": "0", "CheckoutRequestID": ');
          res.writeHead(up.status, { 'content-type': up.type }).end(up.body);
        })
        .catch(() => res.socket?.destroy());
    });
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  return {
    url: `http://127.0.0.1:${(server.address() as AddressInfo).port}`,
    failNext(path, kind, n = 1) {
      const taken = Array.from({ length: n }, () => new Promise<void>((resolve) => queue.push({ path, kind, resolve })));
      return Promise.all(taken).then(() => undefined);
    },
    pending: () => queue.length,
    clear: () => void queue.splice(0),
    async close() {
      for (const res of held) res.socket?.destroy();
      server.closeAllConnections();
      await new Promise((resolve) => server.close(resolve));
    },
  };
}
