import { expect } from '@jest/globals';
import type { LogLevel, LogMetadata } from '@temporalio/common';
import { MockActivityEnvironment } from '@temporalio/testing';
import { createWebhookActivities, type DeliverAttemptResult } from '../../activities/webhooks/index.js';
import { insertEvent, type EventType } from '../../db/event-repo.js';
import { formatKeyEntry, generateKey, type EncryptionKey } from '../../domain/crypto/credentials.js';
import type { CreatedStore } from '../../db/store-repo.js';
import type { Environment } from '../../domain/environment.js';
import { newId } from '../../domain/ids.js';
import type { Config } from '../../config/config.js';
import { maybeRecordHistory } from './histories.js';
import { startStack, type Stack } from './stack.js';
import { TestDnsServer } from './webhook-dns.js';
import { WebhookReceiver } from './webhook-receiver.js';

/**
 * Settings for a stack whose webhook secrets are encrypted with a known key (as in production),
 * and with no DATA_DIR development key to fall back on.
 */
export function encryptionEnv(...keys: EncryptionKey[]): { ENCRYPTION_KEY: string; DATA_DIR: string } {
  const ring = keys.length ? keys : [generateKey()];
  return { ENCRYPTION_KEY: ring.map(formatKeyEntry).join(','), DATA_DIR: '/nonexistent-malipo-test-dir' };
}

/**
 * The operator's opt-in that lets test-mode webhooks reach loopback addresses, which is where the
 * suite's receivers listen (docs/webhooks.md, "URL rules").
 */
export const loopbackWebhooks = { WEBHOOK_TEST_ALLOWED_NETWORKS: 'loopback' } as const;

/**
 * For suites that dispatch the events they write themselves (`emit`, the dispatch activities) and
 * count what each call sent: the stack's workers run no outbox relay, which would otherwise race
 * them for every event (worker/webhook-relay.ts; test/integration/webhook-relay.test.ts tests it).
 */
export const suiteDispatches = { WEBHOOK_RELAY: 'off' } as const;

/** A stack, a webhook receiver and a test DNS server, as the webhook suites stand them up. */
export interface WebhookStack {
  stack: Stack;
  receiver: WebhookReceiver;
  dns: TestDnsServer;
}

/**
 * The delivery suites' stack: loopback endpoints allowed, secrets encrypted with a known key, names
 * resolved by a test DNS server, and the whole Standard Webhooks schedule (about three days)
 * shrunk to about five seconds.
 */
export async function startWebhookStack(): Promise<WebhookStack> {
  const dns = await TestDnsServer.start();
  const stack = await startStack({ WEBHOOK_RETRY_SCALE: '0.00002', WEBHOOK_DNS_SERVERS: dns.server, ...loopbackWebhooks, ...suiteDispatches, ...encryptionEnv() });
  const receiver = await WebhookReceiver.start();
  return { stack, receiver, dns };
}

/** Stops what startWebhookStack started (any part that did not start is skipped). */
export async function stopWebhookStack(w: Partial<WebhookStack>): Promise<void> {
  await w.stack?.stop();
  await w.receiver?.down();
  await w.dns?.close();
}

/** A payment-link-like `data` with the things that must survive unchanged: merchantRef and metadata. */
export const linkData = (ref: string) => ({
  id: 'pl_0123456789abcdefghijklmn',
  status: 'CONFIRMED',
  environment: 'test',
  usdtAmount: '10.5',
  merchantRef: ref,
  metadata: { orderId: 42, customer: { name: 'Wanjiků', tags: ['vip', null] }, note: 'a "quoted" value' },
  confirmedRail: 'MOBILE_MONEY',
  externalId: 'SGR7H2K9LQ',
});

export interface DeliveryRecord {
  id: string;
  eventId: string;
  attempt: number;
  status: string;
  responseStatus: number | null;
  error: string | null;
  latencyMs: number;
  responseBody: string | null;
}

export interface EmitOptions {
  type?: EventType;
  env?: Environment;
  data?: unknown;
  createdAt?: string;
  /** false: write the event to the outbox only, as if the dispatch never ran. */
  dispatch?: boolean;
  /** WEBHOOK_RETRY_SCALE for this event's deliveries, instead of the stack's. */
  scale?: number;
}

/**
 * What the webhook tests do over and over, through the real API and the real activities: register
 * an endpoint on the receiver, write an event to the outbox and dispatch it as the workflows do,
 * read the delivery log, wait for a delivery workflow to finish.
 */
export function webhookHarness(current: () => { stack: Stack; receiver: WebhookReceiver }) {
  // Called at module level, before beforeAll has started anything: look the parts up per call.
  async function endpoint(store: CreatedStore, path: string, extra: Record<string, unknown> = {}, env: Environment = 'test') {
    const { stack, receiver } = current();
    const res = await stack.request({ method: 'POST', url: '/v1/webhook-endpoints', key: store.keys[env].secretKey, payload: { url: receiver.url(path), ...extra } });
    expect(res.status).toBe(201);
    return res.body as { id: string; secret: string; url: string };
  }

  async function emit(store: CreatedStore, opts: EmitOptions = {}) {
    const { stack } = current();
    const event = await insertEvent(stack.pool, {
      storeId: store.clientId,
      environment: opts.env ?? 'test',
      type: opts.type ?? 'payment_link.confirmed',
      dedupeKey: `test:${Math.random()}`,
      data: opts.data ?? linkData('order-1'),
      createdAt: opts.createdAt ?? new Date().toISOString(),
    });
    const config = opts.scale ? { ...stack.config, webhooks: { ...stack.config.webhooks, retryScale: opts.scale } } : stack.config;
    const activities = createWebhookActivities({ pool: stack.pool, temporal: stack.temporal, config });
    const dispatched = opts.dispatch === false ? undefined : await activities.dispatchEvent({ eventId: event.id });
    return { event, dispatched, activities };
  }

  async function deliveries(store: CreatedStore, endpointId: string, env: Environment = 'test'): Promise<DeliveryRecord[]> {
    const { stack } = current();
    const res = await stack.request({ method: 'GET', url: `/v1/webhook-endpoints/${endpointId}/deliveries`, key: store.keys[env].secretKey });
    expect(res.status).toBe(200);
    return res.body.data;
  }

  async function getEndpoint(store: CreatedStore, id: string, env: Environment = 'test') {
    const { stack } = current();
    return (await stack.request({ method: 'GET', url: `/v1/webhook-endpoints/${id}`, key: store.keys[env].secretKey })).body;
  }

  /** Waits for the delivery workflow of the pair to finish and, with RECORD_HISTORIES=1, keeps its history for replay. */
  async function finished(eventId: string, endpointId: string, historyName?: string, suffix = '') {
    const { stack } = current();
    const handle = stack.temporal.workflow.getHandle(`webhook-delivery/${eventId}/${endpointId}${suffix}`);
    const result = await handle.result();
    if (historyName) await maybeRecordHistory(handle, historyName);
    return result;
  }

  return { endpoint, emit, deliveries, getEndpoint, finished };
}

/** Polls `fn` until `ok` holds; fails with the last value seen. */
export async function eventually<T>(fn: () => Promise<T>, ok: (v: T) => boolean, what: string, timeoutMs = 30_000): Promise<T> {
  const deadline = Date.now() + timeoutMs;
  for (;;) {
    const v = await fn();
    if (ok(v)) return v;
    if (Date.now() > deadline) throw new Error(`timed out waiting for ${what}: ${JSON.stringify(v)}`);
    await new Promise((r) => setTimeout(r, 50));
  }
}

export interface LogEntry {
  level: LogLevel;
  message: string;
  meta: LogMetadata | undefined;
}

/**
 * One `deliverAttempt` run outside a worker (with `config`, e.g. another ENCRYPTION_KEY), with
 * the activity's log captured: what a worker would log, as entries.
 */
export async function attemptWithLog(stack: Stack, config: Config, eventId: string, endpointId: string) {
  const logs: LogEntry[] = [];
  const at = (level: LogLevel) => (message: string, meta?: LogMetadata) => void logs.push({ level, message, meta });
  const logger = { log: (level: LogLevel, message: string, meta?: LogMetadata) => void logs.push({ level, message, meta }),
    trace: at('TRACE'), debug: at('DEBUG'), info: at('INFO'), warn: at('WARN'), error: at('ERROR') };
  const activities = createWebhookActivities({ pool: stack.pool, temporal: stack.temporal, config });
  const env = new MockActivityEnvironment({}, { logger });
  const deliveryId = newId('webhookDelivery');
  const result: DeliverAttemptResult = await env.run(activities.deliverAttempt, { eventId, endpointId, deliveryId, trigger: 'manual' as const });
  return { result, logs, deliveryId };
}
