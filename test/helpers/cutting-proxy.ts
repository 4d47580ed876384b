import { createServer } from 'node:http';
import type { AddressInfo } from 'node:net';
import type { UsdtRail } from '../../domain/rails.js';
import type { RailSettings } from '../../rails/settings.js';

/**
 * A pass-through HTTP proxy to a node (anvil, the TronGrid emulator) that, for the requests a test
 * picks, forwards the request, lets the node answer it, and then cuts the connection instead of
 * passing the answer on. The caller never learns that the node took it: as for a process killed
 * right after its send reached the node, nothing the caller would do after the send happens.
 */
export async function startCuttingProxy(target: string, cut: (path: string, body: string) => boolean) {
  const cutBodies: string[] = [];
  const server = createServer((req, res) => {
    const chunks: Buffer[] = [];
    req.on('data', (c: Buffer) => chunks.push(c));
    req.on('end', () => {
      const body = Buffer.concat(chunks).toString('utf8');
      const path = new URL(req.url ?? '/', 'http://proxy.local').pathname;
      const cutting = cut(path, body);
      fetch(new URL(req.url ?? '/', target), { method: req.method, headers: { 'content-type': 'application/json' }, body: chunks.length ? body : undefined })
        .then(async (upstream) => {
          const answer = Buffer.from(await upstream.arrayBuffer());
          if (cutting) {
            cutBodies.push(body);
            res.socket?.destroy();
            return;
          }
          res.writeHead(upstream.status, { 'content-type': upstream.headers.get('content-type') ?? 'application/json' });
          res.end(answer);
        })
        .catch(() => res.socket?.destroy());
    });
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  return {
    url: `http://127.0.0.1:${(server.address() as AddressInfo).port}`,
    /** The bodies of the requests the node answered and the caller never heard back from. */
    cut: () => [...cutBodies],
    async close() {
      server.closeAllConnections();
      await new Promise<void>((resolve) => server.close(() => resolve()));
    },
  };
}

/** The rail settings with the rail's test-environment node replaced by `url` (the proxy in front of it). */
export function railsThrough(rails: RailSettings, rail: UsdtRail, url: string): RailSettings {
  const settings = rails[rail];
  const endpoint = { ...settings.endpoints.test, rpcUrl: url, rpcUrls: [url] };
  return { ...rails, [rail]: { ...settings, endpoints: { ...settings.endpoints, test: endpoint } } };
}
