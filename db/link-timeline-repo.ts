import { sql, type CommonQueryMethods } from 'slonik';
import { z } from 'zod';
import { linkPaymentSchema } from './payment-link-repo.js';

/**
 * What the read model recorded about one payment link, for its timeline on the dashboard: its
 * prompts, callbacks, deposits, payments, event and webhook attempts. Each read is by the link's
 * own keys (all indexed) and bounded. Columns are chosen one by one: the prompt's callback token
 * hash, the callback's raw body and the webhook's response body are never read here.
 * The caller has already checked that the link belongs to the store asking.
 */
const perKind = 200;

const promptRow = z.object({
  attempt: z.string(),
  state: z.string(),
  phone_number: z.string(),
  amount_kes: z.number(),
  checkout_request_id: z.string().nullable(),
  failure_message: z.string().nullable(),
  created_at: z.string(),
});
const callbackRow = z.object({
  checkout_request_id: z.string(),
  result_code: z.string(),
  result_desc: z.string(),
  receipt: z.string().nullable(),
  suspicious_reason: z.string().nullable(),
  received_at: z.string(),
});
const depositRow = z.object({
  rail: z.string(),
  tx_hash: z.string(),
  amount_minor: z.string(),
  decimals: z.number(),
  block_number: z.string(),
  state: z.string(),
  created_at: z.string(),
  updated_at: z.string(),
});
/** A payment as the link's own read has it, without the payer (a timeline entry needs none), with its last change. */
const paymentRow = linkPaymentSchema.omit({ payer: true }).extend({ updated_at: z.string() });
/** `created_at` here is when the outbox row was written (recorded_at), not the event's business time. */
const eventRow = z.object({ id: z.string(), type: z.string(), created_at: z.string(), dispatched_at: z.string().nullable() });
const deliveryRow = z.object({
  attempt: z.number(),
  endpoint_url: z.string(),
  trigger: z.string(),
  status: z.string(),
  response_status: z.number().nullable(),
  latency_ms: z.number().nullable(),
  error: z.string().nullable(),
  created_at: z.string(),
});

export interface LinkRecordRows {
  prompts: z.infer<typeof promptRow>[];
  callbacks: z.infer<typeof callbackRow>[];
  deposits: z.infer<typeof depositRow>[];
  payments: z.infer<typeof paymentRow>[];
  event: z.infer<typeof eventRow> | null;
  deliveries: z.infer<typeof deliveryRow>[];
}

export async function findLinkRecords(db: CommonQueryMethods, linkId: string): Promise<LinkRecordRows> {
  const [prompts, callbacks, deposits, payments, event] = await Promise.all([
    db.any(sql.type(promptRow)`
      SELECT attempt, state, phone_number, amount_kes, checkout_request_id, failure_message, created_at
      FROM mpesa_stk_requests WHERE link_id = ${linkId} ORDER BY created_at LIMIT ${perKind}`),
    db.any(sql.type(callbackRow)`
      SELECT c.checkout_request_id, c.result_code, c.result_desc, c.receipt, c.suspicious_reason, c.received_at
      FROM mpesa_stk_requests s JOIN mpesa_callbacks c ON c.checkout_request_id = s.checkout_request_id
      WHERE s.link_id = ${linkId} ORDER BY c.received_at, c.id LIMIT ${perKind}`),
    db.any(sql.type(depositRow)`
      SELECT rail, tx_hash, amount_minor::text, decimals, block_number::text, state, created_at, updated_at
      FROM chain_deposits WHERE owner_id = ${linkId} AND owner_kind = 'payment_link' ORDER BY created_at LIMIT ${perKind}`),
    db.any(sql.type(paymentRow)`
      SELECT payment_key, rail, external_id, amount_minor::text, decimals, state, disposition, failure_reason, created_at, updated_at
      FROM link_payments WHERE link_id = ${linkId} ORDER BY created_at, payment_key LIMIT ${perKind}`),
    db.maybeOne(sql.type(eventRow)`
      SELECT id, type, recorded_at AS created_at, dispatched_at FROM events WHERE dedupe_key = ${`payment_link.confirmed:${linkId}`}`),
  ]);
  const deliveries = event ? await eventDeliveries(db, event.id) : [];
  return { prompts: [...prompts], callbacks: [...callbacks], deposits: [...deposits], payments: [...payments], event, deliveries };
}

/** Every attempt to deliver one event, to any endpoint, oldest first: by webhook_deliveries_event_idx (migration 0023). */
export async function eventDeliveries(db: CommonQueryMethods, eventId: string): Promise<LinkRecordRows['deliveries']> {
  return [...(await db.any(sql.type(deliveryRow)`
    SELECT d.attempt, e.url AS endpoint_url, d.trigger, d.status, d.response_status, d.latency_ms, d.error, d.created_at
    FROM webhook_deliveries d JOIN webhook_endpoints e ON e.id = d.endpoint_id
    WHERE d.event_id = ${eventId} ORDER BY d.created_at, d.attempt LIMIT ${perKind}`))];
}
