import { createServer, request, type IncomingMessage, type Server, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';

/**
 * The embedded Temporal Web UI, read-only as the production topology's is (docs/operating.md).
 * `temporal server start-dev` has no flag for the UI server's `disableWriteActions`, so the dev
 * server's UI listens on an internal loopback port and this proxy is what people open:
 * - the UI's settings (`GET /api/v1/settings`) come back with write and batch actions disabled
 *   (and every `…Disabled` switch on), so the UI hides Cancel, Terminate, Signal, Reset, Update,
 *   batch actions and the like;
 * - any other method than GET, HEAD or OPTIONS is refused with 403, so a write typed by hand (or
 *   by a UI that ignores a setting) changes nothing. Queries, which read, go through (the UI sends
 *   them as POST …/query/{type}).
 * Nothing is stored or logged; bodies pass through untouched.
 */
export interface ReadOnlyUi {
  port: number;
  close(): Promise<void>;
}

/** Whether a request to the UI server may pass: reads, and queries (a query cannot change a workflow). */
export function uiRequestAllowed(method: string, path: string): boolean {
  if (method === 'GET' || method === 'HEAD' || method === 'OPTIONS') return true;
  // The one write-shaped read: POST /api/v1/namespaces/{ns}/workflows/{id}/query/{type} (ids come
  // percent-encoded: payment-link%2Fpl_…). No dot segments, encoded dots or empty segments that a
  // server could resolve elsewhere.
  const pathname = path.split('?')[0]!;
  if (/(^|\/)\.\.?(\/|$)|%2e|\/\//i.test(pathname)) return false;
  return method === 'POST' && /^\/api\/v1\/namespaces\/[^/]+\/workflows\/[^/]+\/query\/[^/]+\/?$/.test(pathname);
}

/** The UI's settings with every write switched off. */
export function readOnlySettings(settings: Record<string, unknown>): Record<string, unknown> {
  const out: Record<string, unknown> = { ...settings, DisableWriteActions: true, BatchActionsDisabled: true };
  for (const key of Object.keys(out)) if (/Disabled$/.test(key) && typeof out[key] === 'boolean') out[key] = true;
  return out;
}

const isSettings = (path: string) => path.split('?')[0]!.replace(/\/$/, '') === '/api/v1/settings';

function refuse(res: ServerResponse): void {
  res.writeHead(403, { 'content-type': 'application/json' });
  res.end(JSON.stringify({ code: 7, message: 'This Temporal UI is read-only: change a payment through the Malipo API or dashboard.' }));
}

function forward(req: IncomingMessage, res: ServerResponse, targetPort: number): void {
  const upstream = request(
    { host: '127.0.0.1', port: targetPort, method: req.method, path: req.url, headers: { ...req.headers, host: `127.0.0.1:${targetPort}` } },
    (answer) => {
      if (!isSettings(req.url ?? '') || answer.statusCode !== 200) {
        res.writeHead(answer.statusCode ?? 502, answer.headers);
        answer.pipe(res);
        return;
      }
      const chunks: Buffer[] = [];
      answer.on('data', (c: Buffer) => chunks.push(c));
      answer.on('end', () => {
        let body: string;
        try {
          body = JSON.stringify(readOnlySettings(JSON.parse(Buffer.concat(chunks).toString('utf8')) as Record<string, unknown>));
        } catch {
          res.writeHead(502, { 'content-type': 'application/json' });
          res.end(JSON.stringify({ message: 'the Temporal UI answered its settings with something that is not JSON' }));
          return;
        }
        const headers = { ...answer.headers, 'content-length': String(Buffer.byteLength(body)) };
        delete headers['content-encoding'];
        delete headers['transfer-encoding'];
        res.writeHead(200, headers);
        res.end(body);
      });
    },
  );
  upstream.on('error', () => {
    if (!res.headersSent) res.writeHead(502, { 'content-type': 'text/plain' });
    res.end('the Temporal UI is not answering (the dev server may be restarting)');
  });
  req.pipe(upstream);
}

/** Listens on 127.0.0.1:`port` (0: any free port) in front of the UI server on `targetPort`. */
export async function startReadOnlyUi(opts: { port: number; targetPort: number }): Promise<ReadOnlyUi> {
  const server: Server = createServer((req, res) => {
    const method = req.method ?? 'GET';
    if (!uiRequestAllowed(method, req.url ?? '/')) {
      req.resume();
      refuse(res);
      return;
    }
    // The settings are asked for uncompressed, so they can be rewritten.
    if (isSettings(req.url ?? '')) delete req.headers['accept-encoding'];
    forward(req, res, opts.targetPort);
  });
  await new Promise<void>((resolve, reject) => {
    server.once('error', reject);
    server.listen(opts.port, '127.0.0.1', () => resolve());
  });
  return {
    port: (server.address() as AddressInfo).port,
    close: () => new Promise<void>((resolve) => {
      server.closeAllConnections();
      server.close(() => resolve());
    }),
  };
}

/** A port nothing listens on now, on loopback. */
export async function freeLoopbackPort(): Promise<number> {
  const server = createServer();
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', () => resolve()));
  const { port } = server.address() as AddressInfo;
  await new Promise<void>((resolve) => server.close(() => resolve()));
  return port;
}
