import type { Client } from '@temporalio/client';
import pg from 'pg';
import type { ChaosCounts } from './report.js';

/** A payment a scenario's customer made, as the customer knows it. */
export interface MadePayment {
  linkId: string;
  rail: string;
  /** What the customer expects: the link paid by this payment, or (racing a cancel) either. */
  expect: 'confirmed' | 'confirmed-or-cancelled';
}

/** A webhook request the merchant's receiver accepted. */
export interface DeliveredEvent {
  id: string;
  type: string;
  /** The link (or invoice, or transfer) the event is about: `data.id` of the body. */
  objectId?: string;
}

export interface AuditResult extends Pick<ChaosCounts, 'payments' | 'confirmedOnce' | 'doubleConfirmed' | 'eventsDelivered' | 'eventsLost' | 'paymentsLost' | 'stuck' | 'duplicateAddresses' | 'linksByState'> {
  /** Human-readable lines for each problem found (empty when all is well). */
  problems: string[];
}

/**
 * After recovery: what the database, Temporal and the merchant's receiver say about the
 * payments a scenario made. Confirmed exactly once = the link is CONFIRMED, has exactly one
 * counted payment (disposition 'payment'), and exactly one `payment_link.confirmed` event,
 * delivered under one id. Every event in the outbox for the scenario's stores must have reached
 * the receiver (subscribed endpoints only: pass `deliveredStores`).
 */
export async function auditPayments(opts: {
  databaseUrl: string;
  temporal?: Client;
  made: MadePayment[];
  delivered: DeliveredEvent[];
  /** Stores whose endpoint points at the receiver: each of their events must have arrived. */
  deliveredStores: string[];
}): Promise<AuditResult> {
  const db = new pg.Client({ connectionString: opts.databaseUrl });
  await db.connect();
  const problems: string[] = [];
  try {
    const states = await db.query<{ status: string; n: string }>(`SELECT status, count(*)::text AS n FROM payment_links GROUP BY status`);
    const linksByState = Object.fromEntries(states.rows.map((r) => [r.status, Number(r.n)]));

    const linkIds = [...new Set(opts.made.map((m) => m.linkId))];
    const links = await db.query<{ id: string; status: string; counted: string; paid_events: string }>(
      `SELECT l.id, l.status,
              (SELECT count(*) FROM link_payments p WHERE p.link_id = l.id AND p.state = 'confirmed' AND p.disposition = 'payment')::text AS counted,
              (SELECT count(*) FROM events e WHERE e.type = 'payment_link.confirmed' AND e.payload->'data'->>'id' = l.id)::text AS paid_events
         FROM payment_links l WHERE l.id = ANY($1::text[])`,
      [linkIds],
    );
    const byId = new Map(links.rows.map((r) => [r.id, r]));
    const deliveredByLink = new Map<string, Set<string>>();
    for (const e of opts.delivered) {
      if (e.type !== 'payment_link.confirmed' || !e.objectId) continue;
      const ids = deliveredByLink.get(e.objectId) ?? new Set<string>();
      ids.add(e.id);
      deliveredByLink.set(e.objectId, ids);
    }

    let confirmedOnce = 0;
    let doubleConfirmed = 0;
    let paymentsLost = 0;
    for (const linkId of linkIds) {
      const made = opts.made.filter((m) => m.linkId === linkId);
      const row = byId.get(linkId);
      const counted = Number(row?.counted ?? 0);
      const paidEvents = Number(row?.paid_events ?? 0);
      const deliveredIds = deliveredByLink.get(linkId)?.size ?? 0;
      if (counted > 1 || paidEvents > 1 || deliveredIds > 1) {
        doubleConfirmed++;
        problems.push(`${linkId}: counted ${counted} payments, ${paidEvents} paid events, delivered under ${deliveredIds} ids`);
        continue;
      }
      if (row?.status === 'CONFIRMED' && counted === 1 && paidEvents === 1) {
        confirmedOnce++;
        continue;
      }
      const mayBeCancelled = made.every((m) => m.expect === 'confirmed-or-cancelled');
      if (mayBeCancelled && row?.status === 'CANCELLED') {
        // A payment that lost the race with a cancel must still be recorded, never dropped.
        const recorded = await db.query(`SELECT 1 FROM link_payments WHERE link_id = $1 AND state IN ('seen', 'confirmed')`, [linkId]);
        if (recorded.rowCount === 0 && made.some((m) => m.rail !== 'MOBILE_MONEY')) {
          paymentsLost++;
          problems.push(`${linkId}: cancelled and the payment made to it is not recorded`);
        }
        continue;
      }
      paymentsLost++;
      problems.push(`${linkId}: paid (${made.map((m) => m.rail).join(', ')}) but ${row?.status ?? 'missing'} with ${counted} counted payments and ${paidEvents} paid events`);
    }

    const eventRows = await db.query<{ id: string; type: string }>(`SELECT id, type FROM events WHERE store_id = ANY($1::text[])`, [opts.deliveredStores]);
    const deliveredIds = new Set(opts.delivered.map((e) => e.id));
    const lost = eventRows.rows.filter((e) => !deliveredIds.has(e.id));
    for (const e of lost) problems.push(`event ${e.id} (${e.type}) never reached the receiver`);

    const dup = await db.query<{ address: string; n: string }>(
      `SELECT address, count(DISTINCT id)::text AS n FROM (
         SELECT id, tron_address AS address FROM payment_links WHERE tron_address IS NOT NULL
         UNION ALL SELECT id, lower(evm_address) FROM payment_links WHERE evm_address IS NOT NULL
         UNION ALL SELECT id, solana_reference FROM payment_links WHERE solana_reference IS NOT NULL) a
       GROUP BY address HAVING count(DISTINCT id) > 1`,
    );
    for (const d of dup.rows) problems.push(`address ${d.address} given to ${d.n} links`);

    let stuck = 0;
    const processing = await db.query<{ id: string }>(`SELECT id FROM payment_links WHERE status = 'PROCESSING'`);
    for (const { id } of processing.rows) {
      const running = opts.temporal
        ? await opts.temporal.workflow.getHandle(`payment-link/${id}`).describe().then((d) => d.status.name === 'RUNNING', () => false)
        : true;
      if (!running) {
        stuck++;
        problems.push(`${id}: PROCESSING with its workflow closed`);
      }
    }

    return {
      payments: opts.made.length,
      confirmedOnce,
      doubleConfirmed,
      eventsDelivered: deliveredIds.size,
      eventsLost: lost.length,
      paymentsLost,
      stuck,
      duplicateAddresses: dup.rows.length,
      linksByState,
      problems,
    };
  } finally {
    await db.end();
  }
}

/** The webhook requests a receiver accepted, as DeliveredEvents (standard-webhooks `webhook-id`). */
export function deliveredFrom(received: Array<{ headers: Record<string, string | string[] | undefined>; body: string }>): DeliveredEvent[] {
  return received.flatMap((r) => {
    const id = r.headers['webhook-id'];
    if (typeof id !== 'string') return [];
    try {
      const body = JSON.parse(r.body) as { type?: string; data?: { id?: string } };
      return [{ id, type: body.type ?? '', objectId: body.data?.id }];
    } catch {
      return [{ id, type: '' }];
    }
  });
}
