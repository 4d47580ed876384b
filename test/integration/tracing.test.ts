import { afterAll, beforeAll, describe, expect, it } from '@jest/globals';
import { join } from 'node:path';
import { trace } from '@opentelemetry/api';
import { DefaultLogger, Runtime, type LogEntry } from '@temporalio/worker';
import { updateStorePolicy, type CreatedStore } from '../../db/store-repo.js';
import { paymentLinkWorkflowId } from '../../domain/workflow-contract.js';
import { startDarajaEmulator, type DarajaEmulator } from '../../emulators/daraja/server.js';
import { replayHistories } from '../../runtime/replay.js';
import { sandboxPaybill } from '../helpers/daraja.js';
import { connectAllRails, evmXpub, tronXpub } from '../helpers/fixtures.js';
import { OtlpReceiver, type ReceivedSpan } from '../helpers/otlp-receiver.js';
import { startStack, type Stack } from '../helpers/stack.js';
import { eventually } from '../helpers/wait.js';
import { encryptionEnv, loopbackWebhooks } from '../helpers/webhook-harness.js';
import { WebhookReceiver, type Received } from '../helpers/webhook-receiver.js';

/**
 * Tracing (docs/tracing.md) against real parts: an OTLP/HTTP collector in this process, the app
 * and workers on the shared Temporal dev server, a link paid by M-Pesa through the Daraja
 * emulator and its webhook delivered to a local receiver. And the correlation id that follows the
 * payment whether tracing is on or off.
 */

// The worker's own log lines (activity logs go through the Temporal runtime's logger); installed
// before any stack, which then keeps it (test/helpers/stack.ts).
const workerLogs: LogEntry[] = [];
beforeAll(() => {
  Runtime.install({ logger: new DefaultLogger('INFO', (entry) => void workerLogs.push(entry)) });
});

const merchant = sandboxPaybill('trace-1a2b');
const polygonToken = '0x000000000000000000000000000000000000dEaD';

/**
 * A store that takes USDT on Polygon, with a webhook endpoint at `receiver`; with `mpesa`, M-Pesa
 * too, connected through the API with credentials the Daraja emulator checks.
 */
async function readyStore(stack: Stack, receiver: WebhookReceiver, opts: { mpesa: boolean }) {
  const store: CreatedStore = await stack.createStore('Traced');
  const key = store.keys.test.secretKey;
  if (opts.mpesa) {
    const connected = await stack.request({
      method: 'POST', url: `/v1/merchant/clients/${store.clientId}/mobile-money/connect`, key,
      payload: { consumerKey: merchant.consumerKey, consumerSecret: merchant.consumerSecret, shortcode: '174379', passkey: merchant.passkey, environment: 'sandbox' },
    });
    expect(connected.status).toBe(200);
  }
  await connectAllRails(stack, store.clientId, 'test', { evm: evmXpub, tron: tronXpub });
  // No late watch: the link's workflow ends once it is confirmed, and with it its RunWorkflow span.
  await updateStorePolicy(stack.pool, store.clientId, 'test', { lateWatchMinutes: 0 });
  const endpoint = await stack.request({ method: 'POST', url: '/v1/webhook-endpoints', key, payload: { url: receiver.url('/hooks') } });
  expect(endpoint.status).toBe(201);
  return { store, key, webhookSecret: endpoint.body.secret as string };
}

const confirmedWebhook = (receiver: WebhookReceiver) => receiver.requestsTo('/hooks').find((r) => JSON.parse(r.body).type === 'payment_link.confirmed');

async function webhookFor(receiver: WebhookReceiver): Promise<Received> {
  await receiver.waitFor(() => confirmedWebhook(receiver) !== undefined, 'payment_link.confirmed');
  return confirmedWebhook(receiver)!;
}

describe('with OTEL_EXPORTER_OTLP_ENDPOINT unset', () => {
  let stack: Stack;
  let receiver: WebhookReceiver;
  beforeAll(async () => {
    receiver = await WebhookReceiver.start();
    stack = await startStack({ ...loopbackWebhooks, ...encryptionEnv(), USDT_CONTRACT_USDT_POLYGON_TEST: polygonToken });
  });
  afterAll(async () => {
    await stack?.stop();
    await receiver?.down();
  });

  it('makes no span and sends no traceparent, and the correlation id still follows the payment', async () => {
    expect(stack.config.tracing).toBeUndefined();
    expect(stack.tracing).toBeUndefined();
    // No provider registered: a span asked for records nothing.
    expect(trace.getTracer('probe').startSpan('probe').isRecording()).toBe(false);
    const { key } = await readyStore(stack, receiver, { mpesa: false });
    const created = await stack.request({ method: 'POST', url: '/v1/payment-links', key, payload: { usdtAmount: '2', enabledRails: ['USDT_POLYGON'] } });
    expect(created.status).toBe(201);
    const correlationId = created.headers['x-request-id'] as string;
    await stack.workflowStarted(created.body.id);
    const paid = await stack.request({ method: 'POST', url: `/v1/payment-links/${created.body.id}/simulate-payment`, key, payload: { rail: 'USDT_POLYGON' } });
    expect(paid.body.status).toBe('CONFIRMED');

    const webhook = await webhookFor(receiver);
    expect(webhook.headers.traceparent).toBeUndefined();
    // The workflow's memo (the Temporal UI shows it) and the worker's log line of the attempt carry it
    // (the outbox relay sends it, outside any activity, with the correlation id of the activity that wrote the event).
    const described = await stack.temporal.workflow.getHandle(paymentLinkWorkflowId(created.body.id)).describe();
    expect(await described.memo).toMatchObject({ correlationId, status: 'CONFIRMED' });
    // The relay logs the attempt once the attempt's log row is written, a moment after the receiver has it.
    const attempt = await eventually(async () => workerLogs.find((l) => l.message === 'webhook attempt' && l.meta?.eventId === JSON.parse(webhook.body).id), 'the webhook attempt\'s log line');
    expect(attempt.meta).toMatchObject({ correlationId });
  });
});

describe('with OTEL_EXPORTER_OTLP_ENDPOINT set', () => {
  let otlp: OtlpReceiver;
  let daraja: DarajaEmulator;
  let stack: Stack;
  let receiver: WebhookReceiver;
  beforeAll(async () => {
    otlp = await OtlpReceiver.start();
    receiver = await WebhookReceiver.start();
    daraja = await startDarajaEmulator({ merchants: [merchant], deliverVia: (u) => new URL(u.pathname, stack.baseUrl) });
    stack = await startStack({
      OTEL_EXPORTER_OTLP_ENDPOINT: otlp.url,
      MPESA_SANDBOX_URL: daraja.url,
      USDT_CONTRACT_USDT_POLYGON_TEST: polygonToken,
      ...loopbackWebhooks,
      ...encryptionEnv(),
    });
  }, 60_000);
  afterAll(async () => {
    await stack?.stop();
    await daraja?.close();
    await receiver?.down();
    await otlp?.stop();
  });

  it('exports one connected trace for a link paid by M-Pesa: API span → workflow → activities → webhook POST, with no secret in any attribute', async () => {
    const { key, webhookSecret, store } = await readyStore(stack, receiver, { mpesa: true });
    const created = await stack.request({
      method: 'POST', url: '/v1/payment-links', key, payload: { usdtAmount: '1', mobileMoneyAmount: 130, enabledRails: ['MOBILE_MONEY', 'USDT_POLYGON'] },
    });
    expect(created.status).toBe(201);
    const linkId = created.body.id as string;
    const correlationId = created.headers['x-request-id'] as string;
    const depositAddress = created.body.polygonAddress as string;
    expect(depositAddress).toMatch(/^0x[0-9a-fA-F]{40}$/);
    await stack.workflowStarted(linkId);
    const phone = '254708374149';
    const prompted = await stack.request({ method: 'POST', url: `/v1/merchant/payment-links/${linkId}/pay/mobile-money`, key, payload: { phoneNumber: phone } });
    expect(prompted.status).toBe(200);
    const prompt = await daraja.complete(prompted.body.checkoutRequestId, 'success');
    const callbackToken = prompt.callbackUrl.split('/').pop()!;
    const webhook = await webhookFor(receiver);
    // The late watch is 0: the workflow ends, and its RunWorkflow span with it.
    await stack.temporal.workflow.getHandle(paymentLinkWorkflowId(linkId)).result();
    await stack.tracing!.flush();

    const eventId = JSON.parse(webhook.body).id as string;
    const post = await eventually(async () => otlp.spans.find((s) => s.name === 'POST' && s.attributes['malipo.webhook.event_id'] === eventId), 'the webhook POST span');
    expect(post.kind).toBe(3);
    expect(webhook.headers.traceparent).toBe(`00-${post.traceId}-${post.spanId}-01`);

    const spans = otlp.inTrace(post.traceId);
    const byId = new Map(spans.map((s) => [s.spanId, s]));
    // Parents connect: one root, and every other span's parent arrived in the same trace.
    const roots = spans.filter((s) => s.parentSpanId === undefined);
    expect(roots.map((s) => s.name)).toEqual(['POST /v1/payment-links']);
    expect(spans.filter((s) => s.parentSpanId !== undefined && !byId.has(s.parentSpanId)).map((s) => s.name)).toEqual([]);
    const chain: string[] = [];
    for (let s: ReceivedSpan | undefined = post; s; s = s.parentSpanId ? byId.get(s.parentSpanId) : undefined) chain.unshift(s.name);
    expect(chain).toEqual(['POST /v1/payment-links', 'StartWorkflow:paymentLink', 'RunWorkflow:paymentLink', 'StartActivity:confirmLink', 'RunActivity:confirmLink', 'POST']);
    const root = roots[0]!;
    expect(root).toMatchObject({ kind: 2, service: 'malipo', attributes: { 'http.request.method': 'POST', 'http.route': '/v1/payment-links', 'http.response.status_code': 201 } });
    // The workflow's other activities are in the trace too, each span tagged with the correlation id.
    const ran = spans.filter((s) => s.name.startsWith('RunActivity:'));
    expect(ran.length).toBeGreaterThan(2);
    for (const s of [root, ...ran, ...spans.filter((x) => x.name === 'RunWorkflow:paymentLink')]) {
      expect([s.name, s.attributes['malipo.correlation_id']]).toEqual([s.name, correlationId]);
    }
    // The pay request's update joins the workflow in a trace of its own.
    expect(otlp.spans.some((s) => s.name === 'POST /v1/merchant/payment-links/:linkId/pay/mobile-money')).toBe(true);
    expect(otlp.spans.some((s) => s.name.startsWith('HandleUpdate:') || s.name.startsWith('HandleSignal:'))).toBe(true);

    // Not one attribute of any span received holds a secret, a phone number, a key or an address.
    const secrets = [key, store.keys.test.publishableKey, webhookSecret, phone, phone.slice(3), callbackToken, depositAddress, depositAddress.toLowerCase(),
      merchant.consumerKey, merchant.consumerSecret, merchant.passkey].filter(Boolean);
    const values = otlp.spans.flatMap((s) => [s.name, ...Object.values(s.attributes).map(String)]);
    expect(values.length).toBeGreaterThan(50);
    expect(values.filter((v) => secrets.some((secret) => v.includes(secret)))).toEqual([]);
  }, 60_000);

  it('replays every recorded history through the traced workflow bundle', async () => {
    const printed: string[] = [];
    const failed = await replayHistories([join(process.cwd(), 'test', 'histories')], { log: (m: string) => printed.push(m), error: (m: string) => printed.push(m) }, { traced: true });
    expect(printed.filter((m) => m.startsWith('FAILED'))).toEqual([]);
    expect(failed).toBe(0);
    expect(printed.length).toBeGreaterThan(5);
  }, 120_000);
});
