import { appendFile } from 'node:fs/promises';
import { createServer, type Server } from 'node:http';
import { timingSafeEqual } from 'node:crypto';
import { signWebhook } from '../domain/webhooks/signing.js';

/**
 * The demo's stand-in for a merchant's webhook endpoint: verifies each delivery's Standard
 * Webhooks signature with the endpoint's secret (as docs/webhooks.md tells a merchant to), prints
 * one line per verified event and appends it to `DATA_DIR/webhooks.log`. A delivery that fails
 * verification gets a 400 and is printed as refused.
 */
export interface DemoWebhookReceiver {
  url: string;
  /** Set once the endpoint is registered (its secret is known only then). */
  setSecret(secret: string): void;
  close(): Promise<void>;
}

export async function startDemoWebhookReceiver(opts: { port: number; logFile: string; print: (line: string) => void }): Promise<DemoWebhookReceiver> {
  let secret: string | undefined;
  const server: Server = createServer((req, res) => {
    const chunks: Buffer[] = [];
    req.on('data', (c: Buffer) => chunks.push(c));
    req.on('end', () => {
      const body = Buffer.concat(chunks).toString('utf8');
      const id = String(req.headers['webhook-id'] ?? '');
      const ts = Number(req.headers['webhook-timestamp']);
      const given = String(req.headers['webhook-signature'] ?? '').split(' ');
      const fresh = Number.isFinite(ts) && Math.abs(Date.now() / 1000 - ts) < 300;
      const ok = !!secret && fresh && given.some((s) => safeEqual(s, signWebhook(secret!, id, ts, body)));
      let line: string;
      if (!ok) {
        line = `webhook refused: bad or stale signature (${id || 'no id'})`;
      } else {
        const event = JSON.parse(body) as { type: string; data?: Record<string, unknown> };
        const d = event.data ?? {};
        const detail = event.type === 'payment_link.confirmed'
          ? `${d.id} ${d.confirmedRail} ${receivedOnConfirmedRail(d)} (${d.externalId})`
          : `${d.network ?? ''} ${d.amount ?? ''} ${d.txHash ?? ''}`.trim();
        line = `webhook verified: ${event.type} ${detail}`;
      }
      opts.print(line);
      void appendFile(opts.logFile, `${new Date().toISOString()} ${line}\n`).catch(() => undefined);
      res.writeHead(ok ? 200 : 400).end(ok ? 'ok' : 'bad signature');
    });
  });
  await new Promise<void>((resolve, reject) => {
    server.once('error', reject);
    server.listen(opts.port, '127.0.0.1', resolve);
  });
  return {
    url: `http://127.0.0.1:${opts.port}/webhooks`,
    setSecret: (s) => void (secret = s),
    close: () => new Promise<void>((resolve) => {
      server.closeAllConnections();
      server.close(() => resolve());
    }),
  };
}

function safeEqual(a: string, b: string): boolean {
  const x = Buffer.from(a);
  const y = Buffer.from(b);
  return x.length === y.length && timingSafeEqual(x, y);
}

/**
 * What the confirmed rail received, in its own currency ("1500 KES", "10 USDT"): the currency of
 * the payment that confirmed the link (each payment names its unit) and the link's
 * `amountsReceived` in it.
 */
export function receivedOnConfirmedRail(d: Record<string, unknown>): string {
  const payments = (d.payments ?? []) as { rail: string; state: string; currency?: string }[];
  const currency = payments.find((p) => p.rail === d.confirmedRail && p.state === 'confirmed')?.currency ?? 'USDT';
  const amounts = (d.amountsReceived ?? {}) as Record<string, string>;
  return `${amounts[currency] ?? d.amountReceived ?? '0'} ${currency}`;
}
