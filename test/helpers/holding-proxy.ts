import { createServer, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';

/**
 * A pass-through HTTP proxy to `target` that, once armed, never answers the next request to
 * `holdPath` (an upstream that hangs mid-call), so a test can act while an activity is stuck in it.
 */
export async function startHoldingProxy(target: string, holdPath: string) {
  const held: ServerResponse[] = [];
  let toHold = 0;
  const server = createServer((req, res) => {
    const chunks: Buffer[] = [];
    req.on('data', (c: Buffer) => chunks.push(c));
    req.on('end', () => {
      const path = new URL(req.url ?? '/', 'http://proxy.local').pathname;
      if (path === holdPath && toHold > 0) {
        toHold--;
        held.push(res);
        return;
      }
      const headers: Record<string, string> = {};
      for (const name of ['content-type', 'authorization']) if (typeof req.headers[name] === 'string') headers[name] = req.headers[name] as string;
      fetch(new URL(req.url ?? '/', target), { method: req.method, headers, body: chunks.length ? Buffer.concat(chunks) : undefined })
        .then(async (upstream) => {
          res.writeHead(upstream.status, { 'content-type': upstream.headers.get('content-type') ?? 'application/json' });
          res.end(Buffer.from(await upstream.arrayBuffer()));
        })
        .catch(() => res.socket?.destroy());
    });
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  return {
    url: `http://127.0.0.1:${(server.address() as AddressInfo).port}`,
    /** Holds the next request to holdPath. */
    arm: () => void toHold++,
    /** Requests held so far. */
    held: () => held.length,
    async close() {
      for (const res of held) res.socket?.destroy();
      server.closeAllConnections();
      await new Promise((resolve) => server.close(resolve));
    },
  };
}
