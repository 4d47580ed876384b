import { afterAll, beforeAll, describe, expect, it } from '@jest/globals';
import { WorkflowNotFoundError } from '@temporalio/client';
import { sql } from 'slonik';
import { z } from 'zod';
import { createOutboxRelay } from '../../activities/webhooks/relay.js';
import { createWebhookActivities } from '../../activities/webhooks/index.js';
import { claimEvent, insertEvent } from '../../db/event-repo.js';
import { openPool } from '../../db/pool.js';
import type { CreatedStore } from '../../db/store-repo.js';
import { paymentLinkWorkflowId } from '../../domain/workflow-contract.js';
import { firstDeliveryId } from '../../services/webhooks/attempts.js';
import { runWebhookRelay } from '../../worker/webhook-relay.js';
import { connectAllRails } from '../helpers/fixtures.js';
import { maybeRecordHistory } from '../helpers/histories.js';
import { StatementCounter } from '../helpers/pg-statement-counter.js';
import { startStack, type Stack } from '../helpers/stack.js';
import { eventually } from '../helpers/wait.js';
import { encryptionEnv, linkData, loopbackWebhooks, webhookHarness } from '../helpers/webhook-harness.js';
import { verifyWebhook, WebhookReceiver } from '../helpers/webhook-receiver.js';

// The outbox relay (worker/webhook-relay.ts) runs in the stack's workers, as in a deployment: an
// event is sent because it was committed, with no dispatch call from whoever wrote it.
let stack: Stack;
let receiver: WebhookReceiver;
beforeAll(async () => {
  stack = await startStack({ WEBHOOK_RETRY_SCALE: '0.00002', ...loopbackWebhooks, ...encryptionEnv() });
  receiver = await WebhookReceiver.start();
});
afterAll(async () => {
  await stack?.stop();
  await receiver?.down();
});

const { endpoint, deliveries } = webhookHarness(() => ({ stack, receiver }));

/** Writes an event to the outbox as a confirming activity does, and nothing else. */
const write = (store: CreatedStore, ref = 'order-1') =>
  insertEvent(stack.pool, {
    storeId: store.clientId, environment: 'test', type: 'payment_link.confirmed', dedupeKey: `relay-test:${Math.random()}`, data: linkData(ref), createdAt: new Date().toISOString(),
  });

const dispatchedAt = (id: string) =>
  stack.pool.oneFirst(sql.type(z.object({ d: z.string().nullable() }))`SELECT dispatched_at AS d FROM events WHERE id = ${id}`);

/** Webhook ids the receiver got on a path, each with how many times. */
function countsByWebhookId(path: string): Map<string, number> {
  const counts = new Map<string, number>();
  for (const r of receiver.requestsTo(path)) {
    const id = String(r.headers['webhook-id']);
    counts.set(id, (counts.get(id) ?? 0) + 1);
  }
  return counts;
}

describe('the outbox relay', () => {
  it('sends an event its writer never dispatched, once, inline (no delivery workflow), and marks it dispatched', async () => {
    const store = await stack.createStore();
    const ep = await endpoint(store, '/relay/one');
    const event = await write(store);
    await receiver.waitFor(() => receiver.requestsTo('/relay/one').length === 1, 'the relayed webhook', 10_000);
    const [req] = receiver.requestsTo('/relay/one');
    expect(verifyWebhook(ep.secret, req!)).toMatchObject({ id: event.id, type: 'payment_link.confirmed', data: linkData('order-1') });
    const log = await eventually(async () => {
      const d = await deliveries(store, ep.id);
      return d.length === 1 && (await dispatchedAt(event.id)) ? d : undefined;
    }, 'the delivery log and the dispatch mark');
    expect(log.map((d) => [d.id, d.attempt, d.status])).toEqual([[firstDeliveryId(event.id, ep.id), 1, 'succeeded']]);
    // Taken inline: no retry schedule was started for it.
    await expect(stack.temporal.workflow.getHandle(`webhook-delivery/${event.id}/${ep.id}`).describe()).rejects.toThrow(WorkflowNotFoundError);
    expect(receiver.requestsTo('/relay/one')).toHaveLength(1);
  });

  it('sends a paid link\'s payment_link.confirmed without a dispatch activity in the link\'s history', async () => {
    const store = await stack.createStore();
    await connectAllRails(stack, store.clientId, 'test');
    const key = store.keys.test.secretKey;
    const ep = await endpoint(store, '/relay/link');
    const link = await stack.request({ method: 'POST', url: '/v1/payment-links', key, payload: { usdtAmount: '3', enabledRails: ['USDT_BSC'], merchantRef: 'relay-link' } });
    expect(link.status).toBe(201);
    const paid = await stack.request({ method: 'POST', url: `/v1/payment-links/${link.body.id}/simulate-payment`, key, payload: { rail: 'USDT_BSC' } });
    expect(paid.body.status).toBe('CONFIRMED');
    await receiver.waitFor(() => receiver.requestsTo('/relay/link').length === 1, 'payment_link.confirmed', 10_000);
    expect(verifyWebhook(ep.secret, receiver.requestsTo('/relay/link')[0]!)).toMatchObject({ type: 'payment_link.confirmed', data: { id: link.body.id, status: 'CONFIRMED' } });
    const history = (await stack.temporal.workflow.getHandle(paymentLinkWorkflowId(link.body.id)).fetchHistory()).events ?? [];
    const activities = history.flatMap((e) => (e.activityTaskScheduledEventAttributes?.activityType?.name ? [e.activityTaskScheduledEventAttributes.activityType.name] : []));
    expect(activities).toContain('confirmLink');
    expect(activities).not.toContain('dispatchEvent');
    expect(history.some((e) => e.markerRecordedEventAttributes?.markerName === 'core_patch')).toBe(true);
    // Replayed by workflow-histories.test.ts: the first history recorded with the `outbox-relay` marker.
    await maybeRecordHistory(stack.temporal.workflow.getHandle(paymentLinkWorkflowId(link.body.id)), 'payment-link-outbox-relay');
  });

  it('sends each of 120 events to each of 3 endpoints exactly once while a second relay and direct dispatches race for them', async () => {
    const store = await stack.createStore();
    const eps = [await endpoint(store, '/relay/many/0'), await endpoint(store, '/relay/many/1'), await endpoint(store, '/relay/many/2')];
    // A second process's relay, on its own pool, beside the stack's.
    const pool = await openPool(stack.config.databaseUrl!, 4, { preparedStatements: true });
    const second = runWebhookRelay({ pool, temporal: stack.temporal, config: stack.config }, { pollMs: 20, batch: 7, maxInFlight: 21, errorPauseMs: 100 });
    const activities = createWebhookActivities({ pool: stack.pool, temporal: stack.temporal, config: stack.config });
    try {
      const events = await Promise.all(Array.from({ length: 120 }, (_, i) => write(store, `many-${i}`)));
      // Every fourth writer also dispatches its event itself, as the chain scan does.
      const direct = await Promise.all(events.filter((_, i) => i % 4 === 0).map((e) => activities.dispatchEvent({ eventId: e.id })));
      await receiver.waitFor(() => eps.every((_, i) => receiver.requestsTo(`/relay/many/${i}`).length >= 120), '360 deliveries', 60_000);
      await eventually(async () => {
        const left = await stack.pool.oneFirst(sql.type(z.object({ n: z.number() }))`
          SELECT count(*)::int AS n FROM events WHERE id = ANY(${sql.array(events.map((e) => e.id), 'text')}) AND dispatched_at IS NULL`);
        return left === 0 || undefined;
      }, 'every event marked dispatched');
      for (let i = 0; i < eps.length; i++) {
        const counts = countsByWebhookId(`/relay/many/${i}`);
        expect(counts.size).toBe(120);
        expect([...counts.values()].every((n) => n === 1)).toBe(true);
        expect(new Set(counts.keys())).toEqual(new Set(events.map((e) => e.id)));
      }
      const rows = await stack.pool.oneFirst(sql.type(z.object({ n: z.number() }))`
        SELECT count(*)::int AS n FROM webhook_deliveries WHERE event_id = ANY(${sql.array(events.map((e) => e.id), 'text')})`);
      expect(rows).toBe(360);
      // A direct dispatch that found the event claimed answered no endpoints; one that claimed it first
      // sent to all three; one that came after the relay finished settled the relay's logged attempts.
      for (const r of direct) {
        expect(r.retrying).toBe(0);
        expect(r.endpoints === 0 ? [r.deferred, r.sent] : [r.endpoints, [0, 3].includes(r.sent)]).toEqual(r.endpoints === 0 ? [true, 0] : [3, true]);
      }
    } finally {
      await second.stop();
      await pool.end();
    }
  });

  it('leaves an event another dispatcher holds alone until its claim lapses, then sends it once', async () => {
    const store = await stack.createStore();
    await endpoint(store, '/relay/held');
    // A dispatcher that claimed the event and died: its claim lasts an hour. Written and claimed in
    // one transaction, so the relay never sees it unclaimed.
    const { held, claim } = await stack.pool.transaction(async (tx) => {
      const e = await insertEvent(tx, {
        storeId: store.clientId, environment: 'test', type: 'payment_link.confirmed', dedupeKey: `relay-test:${Math.random()}`, data: linkData('held'), createdAt: new Date().toISOString(),
      });
      return { held: e, claim: await claimEvent(tx, e.id, 3600) };
    });
    expect(claim.status).toBe('claimed');
    // The relay keeps running meanwhile: a later event is sent, the held one is not.
    const later = await write(store, 'later');
    await receiver.waitFor(() => countsByWebhookId('/relay/held').has(later.id), 'the later event', 10_000);
    expect(countsByWebhookId('/relay/held').has(held.id)).toBe(false);
    const direct = await createWebhookActivities({ pool: stack.pool, temporal: stack.temporal, config: stack.config }).dispatchEvent({ eventId: held.id });
    expect(direct).toEqual({ endpoints: 0, deferred: true, sent: 0, retrying: 0 });
    expect(await dispatchedAt(held.id)).toBeNull();
    // The claim lapses (its holder never came back).
    await stack.pool.query(sql.unsafe`UPDATE events SET dispatch_claimed_until = now() - interval '1 second' WHERE id = ${held.id}`);
    await receiver.waitFor(() => countsByWebhookId('/relay/held').has(held.id), 'the held event', 10_000);
    await eventually(async () => (await dispatchedAt(held.id)) ?? undefined, 'the held event marked dispatched');
    expect(countsByWebhookId('/relay/held').get(held.id)).toBe(1);
  });

  it('lets an endpoint that hangs hold 16 first attempts at most: its next event goes to a delivery workflow, and another store\'s is sent meanwhile', async () => {
    const [slow, fast] = [await stack.createStore(), await stack.createStore()];
    let released = false;
    receiver.on('/relay/hang', () => (released ? { status: 200 } : { status: 200, hang: true }));
    const hang = await endpoint(slow, '/relay/hang');
    await endpoint(fast, '/relay/fast');
    const hanging: string[] = [];
    try {
      // Sixteen events, each in a batch of its own: each waits for its answer (10 s at most).
      for (let i = 0; i < 16; i++) {
        hanging.push((await write(slow, `hang-${i}`)).id);
        await receiver.waitFor(() => receiver.requestsTo('/relay/hang').length === i + 1, `hanging attempt ${i + 1}`, 5_000);
      }
      const loggedForSlow = () => stack.pool.oneFirst(sql.type(z.object({ n: z.number() }))`
        SELECT count(*)::int AS n FROM webhook_deliveries WHERE endpoint_id = ${hang.id}`);
      // Another store's event is sent while all sixteen still hang.
      const other = await write(fast, 'fast');
      await receiver.waitFor(() => countsByWebhookId('/relay/fast').has(other.id), 'the other store\'s event', 5_000);
      // The seventeenth waits a second for a slot, then its delivery workflow takes it, while the sixteen still hang.
      const next = await write(slow, 'hang-17');
      await eventually(async () => (await stack.temporal.workflow.getHandle(`webhook-delivery/${next.id}/${hang.id}`).describe().then(() => true, () => undefined)), 'the 17th event\'s delivery workflow', 8_000);
      expect(await loggedForSlow()).toBe(0);
      expect(receiver.requestsTo('/relay/hang').filter((r) => hanging.includes(String(r.headers['webhook-id'])))).toHaveLength(16);
    } finally {
      released = true;
    }
  });

  it('sends nothing inline for an event dispatched already: a first attempt not logged goes to its delivery workflow', async () => {
    const store = await stack.createStore();
    const ep = await endpoint(store, '/relay/redispatch');
    // Fanned out by the relay with this endpoint's first attempt left to its workflow (not logged yet), then marked.
    const event = await stack.pool.transaction(async (tx) => {
      const e = await insertEvent(tx, {
        storeId: store.clientId, environment: 'test', type: 'payment_link.confirmed', dedupeKey: `relay-test:${Math.random()}`, data: linkData('again'), createdAt: new Date().toISOString(),
      });
      await tx.query(sql.unsafe`UPDATE events SET dispatched_at = now() WHERE id = ${e.id}`);
      return e;
    });
    // A link from before the relay dispatches it from its history: the workflow's attempt is the only one.
    const again = await createWebhookActivities({ pool: stack.pool, temporal: stack.temporal, config: stack.config }).dispatchEvent({ eventId: event.id });
    expect(again).toEqual({ endpoints: 1, sent: 0, retrying: 1 });
    await stack.temporal.workflow.getHandle(`webhook-delivery/${event.id}/${ep.id}`).result();
    expect(countsByWebhookId('/relay/redispatch').get(event.id)).toBe(1);
  });

  it('marks an event no endpoint subscribes to dispatched, sending nothing', async () => {
    const store = await stack.createStore();
    await endpoint(store, '/relay/transfers-only', { enabledEvents: ['transfer.confirmed'] });
    const event = await write(store);
    await eventually(async () => (await dispatchedAt(event.id)) ?? undefined, 'the dispatch mark');
    expect(receiver.requestsTo('/relay/transfers-only')).toHaveLength(0);
  });
});

describe('a relay batch', () => {
  it('takes the same five statements for thirty events to two endpoints as for one: claim, endpoints, logged attempts, one log INSERT, the marks', async () => {
    // A stack without a relay of its own, so that the counted relay is the only one claiming.
    const quiet = await startStack({ WEBHOOK_RELAY: 'off', ...loopbackWebhooks, ...encryptionEnv() });
    const counter = await StatementCounter.start();
    const pool = await openPool(counter.urlFor(quiet.config.databaseUrl!), 4, { preparedStatements: true });
    try {
      const store = await quiet.createStore();
      const key = store.keys.test.secretKey;
      for (const path of ['/batch/a', '/batch/b']) {
        expect((await quiet.request({ method: 'POST', url: '/v1/webhook-endpoints', key, payload: { url: receiver.url(path) } })).status).toBe(201);
      }
      const relay = createOutboxRelay({ pool, temporal: quiet.temporal, config: quiet.config });
      const counted = async (n: number) => {
        for (let i = 0; i < n; i++) {
          await insertEvent(quiet.pool, { storeId: store.clientId, environment: 'test', type: 'payment_link.confirmed', dedupeKey: `batch:${n}:${i}`, data: linkData(`b-${i}`), createdAt: new Date().toISOString() });
        }
        let results: Awaited<ReturnType<typeof relay.fanOut>> = [];
        const statements = await counter.during(async () => {
          results = await relay.fanOut(await relay.claim(50));
        });
        expect(results).toHaveLength(n);
        for (const r of results) expect(r).toEqual({ endpoints: 2, sent: 2, retrying: 0 });
        return statements.filter((q) => /\b(events|webhook_endpoints|webhook_deliveries)\b/.test(q));
      };
      const one = await counted(1);
      const thirty = await counted(30);
      // Claim (which returns the events), their endpoints, the first attempts already logged, one INSERT, the marks; a settle reads nothing more.
      expect(one).toHaveLength(5);
      expect(thirty).toHaveLength(5);
      expect(thirty.filter((q) => /INSERT INTO webhook_deliveries/.test(q))).toHaveLength(1);
      expect(receiver.requestsTo('/batch/a')).toHaveLength(31);
      expect(receiver.requestsTo('/batch/b')).toHaveLength(31);
    } finally {
      await pool.end();
      await counter.close();
      await quiet.stop();
    }
  });

  it('marks the rest of a batch when one of its events keeps failing, sending nothing twice, and keeps that one claimed', async () => {
    const quiet = await startStack({ WEBHOOK_RELAY: 'off', ...loopbackWebhooks, ...encryptionEnv() });
    try {
      const store = await quiet.createStore();
      const key = store.keys.test.secretKey;
      expect((await quiet.request({ method: 'POST', url: '/v1/webhook-endpoints', key, payload: { url: receiver.url('/poison') } })).status).toBe(201);
      const events = [];
      for (let i = 0; i < 3; i++) {
        events.push(await insertEvent(quiet.pool, { storeId: store.clientId, environment: 'test', type: 'payment_link.confirmed', dedupeKey: `poison:${i}`, data: linkData(`p-${i}`), createdAt: new Date().toISOString() }));
      }
      const poison = events[1]!.id;
      // PostgreSQL refuses to mark this one event dispatched (a real failure, not a stand-in): the batch's mark statement fails.
      await quiet.pool.query(sql.unsafe`CREATE FUNCTION refuse_mark() RETURNS trigger LANGUAGE plpgsql AS $$
        BEGIN IF NEW.id = ${sql.literalValue(poison)} AND NEW.dispatched_at IS NOT NULL THEN RAISE EXCEPTION 'refused for the test'; END IF; RETURN NEW; END $$`);
      await quiet.pool.query(sql.unsafe`CREATE TRIGGER refuse_mark BEFORE UPDATE ON events FOR EACH ROW EXECUTE FUNCTION refuse_mark()`);
      const relay = createOutboxRelay({ pool: quiet.pool, temporal: quiet.temporal, config: quiet.config });
      const claimed = await relay.claim(50);
      expect(claimed.map((e) => e.id).sort()).toEqual(events.map((e) => e.id).sort());
      await expect(relay.fanOut(claimed)).rejects.toThrow(/refused for the test/);
      const state = await quiet.pool.any(sql.type(z.object({ id: z.string(), dispatched: z.boolean(), held: z.boolean() }))`
        SELECT id, dispatched_at IS NOT NULL AS dispatched, dispatch_claimed_until > now() AS held FROM events ORDER BY id`);
      expect(Object.fromEntries(state.map((r) => [r.id, [r.dispatched, r.id === poison ? r.held : true]]))).toEqual(
        Object.fromEntries(events.map((e) => [e.id, [e.id !== poison, true]])));
      // Each of the three was sent once, by the batch: the tries alone settled what it had logged.
      const counts = countsByWebhookId('/poison');
      expect(events.map((e) => counts.get(e.id))).toEqual([1, 1, 1]);
    } finally {
      await quiet.pool.query(sql.unsafe`DROP TRIGGER IF EXISTS refuse_mark ON events`).catch(() => undefined);
      await quiet.stop();
    }
  });
});
