import { createServer, type IncomingHttpHeaders, type Server } from 'node:http';
import type { AddressInfo, Socket } from 'node:net';
import { Webhook } from 'standardwebhooks';

/** One request as the merchant's server saw it. */
export interface Received {
  path: string;
  headers: IncomingHttpHeaders;
  body: string;
  /** performance.now() when the request's body had arrived (the benches time deliveries by it). */
  at: number;
}

export interface Reply {
  status: number;
  body?: string;
  headers?: Record<string, string>;
  /** Never answer: the connection stays open until the sender gives up or the receiver stops. */
  hang?: boolean;
}

/** Decides the answer to the nth request (1-based) on a path. */
export type Behaviour = (req: Received, nth: number) => Reply;

/**
 * A merchant's webhook receiver on a real port: records every request, answers as scripted per
 * path (200 by default), can go down and come back up on the same port, and counts raw TCP
 * connections (to prove a refused destination was never even dialled).
 */
export class WebhookReceiver {
  readonly received: Received[] = [];
  connections = 0;
  private behaviours = new Map<string, Behaviour>();
  private counts = new Map<string, number>();
  private sockets = new Set<Socket>();
  private server: Server | undefined;
  private constructor(public port: number) {}

  static async start(): Promise<WebhookReceiver> {
    const r = new WebhookReceiver(0);
    await r.up();
    return r;
  }

  url(path: string): string {
    return `http://127.0.0.1:${this.port}${path}`;
  }

  on(path: string, behaviour: Behaviour): this {
    this.behaviours.set(path, behaviour);
    return this;
  }

  requestsTo(path: string): Received[] {
    return this.received.filter((r) => r.path === path);
  }

  async up(): Promise<void> {
    const server = createServer((req, res) => {
      const chunks: Buffer[] = [];
      req.on('data', (c: Buffer) => chunks.push(c));
      req.on('end', () => {
        const path = req.url ?? '/';
        const received = { path, headers: req.headers, body: Buffer.concat(chunks).toString('utf8'), at: performance.now() };
        this.received.push(received);
        const nth = (this.counts.get(path) ?? 0) + 1;
        this.counts.set(path, nth);
        const reply: Reply = (this.behaviours.get(path) ?? ((): Reply => ({ status: 200, body: 'ok' })))(received, nth);
        if (reply.hang) return;
        res.writeHead(reply.status, reply.headers).end(reply.body ?? '');
      });
    });
    server.on('connection', (s: Socket) => {
      this.connections++;
      this.sockets.add(s);
      s.on('close', () => this.sockets.delete(s));
    });
    await new Promise<void>((resolve) => server.listen(this.port, '127.0.0.1', resolve));
    this.port = (server.address() as AddressInfo).port;
    this.server = server;
  }

  /** Stops listening and cuts open connections; `up()` listens on the same port again. */
  async down(): Promise<void> {
    const server = this.server;
    this.server = undefined;
    if (!server) return;
    for (const s of this.sockets) s.destroy();
    await new Promise<void>((resolve) => server.close(() => resolve()));
  }

  /** Waits (without assuming any timing) until `predicate` holds, polling every 25 ms. */
  async waitFor(predicate: () => boolean, what: string, timeoutMs = 30_000): Promise<void> {
    const deadline = Date.now() + timeoutMs;
    while (!predicate()) {
      if (Date.now() > deadline) throw new Error(`timed out waiting for ${what}`);
      await new Promise((r) => setTimeout(r, 25));
    }
  }
}

/** Verifies a received webhook with the standardwebhooks library, as a merchant would. */
export function verifyWebhook(secret: string, r: Received): unknown {
  return new Webhook(secret).verify(r.body, r.headers as Record<string, string>);
}
