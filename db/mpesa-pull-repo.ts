import { sql, type CommonQueryMethods } from 'slonik';
import { z } from 'zod';
import type { Environment } from '../domain/environment.js';
import { findC2bPayment, type C2bPaymentRow, type NewC2bPayment } from './mpesa-c2b-repo.js';

/** M-Pesa Pull Transactions (migration 0037): which stores are pulled, and what each pull found. */
const env = z.enum(['test', 'live']);

const pullTarget = z.object({
  store_id: z.string(),
  environment: env,
  shortcode: z.string(),
  settles_alone: z.boolean(),
  pulled_at: z.string().nullable(),
});
export type PullTarget = z.infer<typeof pullTarget>;

/** Every connection registered for Pull Transactions whose C2B URLs are registered (their shortcode is what payments are stored under). */
export async function listPullTargets(db: CommonQueryMethods): Promise<PullTarget[]> {
  return [...(await db.any(sql.type(pullTarget)`
    SELECT c.store_id, c.environment, r.shortcode, c.c2b_settles_alone AS settles_alone, c.c2b_pulled_at::text AS pulled_at
    FROM mobile_money_connections c JOIN mpesa_c2b_registrations r USING (store_id, environment)
    WHERE c.c2b_pull_registered_at IS NOT NULL AND r.registered_at IS NOT NULL
    ORDER BY c.store_id, c.environment`))];
}

export async function findPullTarget(db: CommonQueryMethods, storeId: string, environment: Environment): Promise<PullTarget | null> {
  return (await listPullTargets(db)).find((t) => t.store_id === storeId && t.environment === environment) ?? null;
}

export async function savePullRegistration(db: CommonQueryMethods, storeId: string, environment: Environment, r: { registered: boolean; error: string | null }): Promise<void> {
  await db.query(sql.unsafe`
    UPDATE mobile_money_connections
    SET c2b_pull_registered_at = CASE WHEN ${r.registered} THEN now() ELSE c2b_pull_registered_at END, c2b_pull_error = ${r.error}
    WHERE store_id = ${storeId} AND environment = ${environment}`);
}

export async function setPulledAt(db: CommonQueryMethods, storeId: string, environment: Environment, at: Date): Promise<void> {
  await db.query(sql.unsafe`
    UPDATE mobile_money_connections SET c2b_pulled_at = GREATEST(coalesce(c2b_pulled_at, ${at.toISOString()}::timestamptz), ${at.toISOString()}::timestamptz)
    WHERE store_id = ${storeId} AND environment = ${environment}`);
}

/** A payment whose confirmation never arrived, stored from its pulled record; `stored` false returns the row already there. */
export async function recordPulledC2bPayment(db: CommonQueryMethods, p: NewC2bPayment): Promise<{ stored: boolean; row: C2bPaymentRow; pulledBefore: boolean }> {
  const inserted = await db.maybeOneFirst(sql.type(z.object({ id: z.string() }))`
    INSERT INTO mpesa_c2b_payments (store_id, environment, shortcode, trans_id, transaction_type, trans_time, amount, bill_ref, account_ref,
      link_id, msisdn, payer_name, state, fingerprint, body, source, pulled_at, pulled)
    VALUES (${p.store_id}, ${p.environment}, ${p.shortcode}, ${p.trans_id}, ${p.transaction_type}, ${p.trans_time}, ${p.amount}, ${p.bill_ref},
      ${p.account_ref}, ${p.link_id}, ${p.msisdn}, ${p.payer_name}, ${p.state}, ${p.fingerprint}, ${sql.jsonb(p.body as never)}, 'pull', now(),
      ${sql.jsonb(p.body as never)})
    ON CONFLICT (environment, shortcode, trans_id) DO NOTHING
    RETURNING id::text`);
  const row = (await findC2bPayment(db, p.shortcode, p.trans_id))!;
  if (inserted) return { stored: true, row, pulledBefore: false };
  const pulledBefore = await db.oneFirst(sql.type(z.object({ p: z.boolean() }))`
    SELECT pulled_at IS NOT NULL AS p FROM mpesa_c2b_payments WHERE id = ${row.id}`);
  return { stored: false, row, pulledBefore };
}

/** Records that Pull Transactions listed a stored payment (the first listing is kept). */
export async function markPulled(db: CommonQueryMethods, id: string, record: unknown): Promise<void> {
  await db.query(sql.unsafe`
    UPDATE mpesa_c2b_payments SET pulled_at = coalesce(pulled_at, now()), pulled = coalesce(pulled, ${sql.jsonb(record as never)}) WHERE id = ${id}`);
}

/** awaiting_evidence → `to`; whether this call moved it. */
export async function settleAwaiting(db: CommonQueryMethods, id: string, to: 'matched' | 'disputed'): Promise<boolean> {
  const moved = await db.maybeOneFirst(sql.type(z.object({ id: z.string() }))`
    UPDATE mpesa_c2b_payments SET state = ${to} WHERE id = ${id} AND state = 'awaiting_evidence' RETURNING id::text`);
  return moved !== null;
}

/**
 * The reconciler's finding for a pulled payment that names no link: kind `unmatched_payment`,
 * status `noted`, address `<shortcode>:<TransID>`. Its id is derived from the payment, so a
 * second pull records nothing new. Whether it was created now.
 */
export async function recordUnmatchedPullFinding(
  db: CommonQueryMethods,
  f: { storeId: string; environment: Environment; rail: string; shortcode: string; transId: string; amount: string },
): Promise<boolean> {
  const id = `rcf_pull_${f.environment}_${f.shortcode}_${f.transId}`;
  const whole = f.amount.split('.')[0]!;
  const created = await db.maybeOneFirst(sql.type(z.object({ id: z.string() }))`
    INSERT INTO reconciliation_findings (id, store_id, environment, rail, address, owner_kind, owner_id, derived_index, kind, status,
      balance_minor, recorded_minor, expected_minor, difference_minor, decimals, block_number)
    VALUES (${id}, ${f.storeId}, ${f.environment}, ${f.rail}, ${`${f.shortcode}:${f.transId}`}, 'payment_link', NULL, NULL, 'unmatched_payment', 'noted',
      ${whole}, 0, 0, ${whole}, 0, 0)
    ON CONFLICT (id) DO NOTHING RETURNING id`);
  return created !== null;
}

/**
 * The reconciler's finding for a confirmation that waits for corroboration (`awaiting_evidence`)
 * and can no longer get it: received longer ago than Pull Transactions reaches back, or its store
 * is not registered for Pull at all. Kind `unverified_payment`, status `noted`, address
 * `<shortcode>:<TransID>`, the link as owner, its amount in KES; one per payment (the id is
 * derived from it). How many were recorded now.
 */
export async function recordUnverifiedFindings(db: CommonQueryMethods, q: { rail: string; reachMs: number; batch: number }): Promise<number> {
  const reachSeconds = Math.floor(q.reachMs / 1000);
  const created = await db.anyFirst(sql.type(z.object({ id: z.string() }))`
    INSERT INTO reconciliation_findings (id, store_id, environment, rail, address, owner_kind, owner_id, derived_index, kind, status,
      balance_minor, recorded_minor, expected_minor, difference_minor, decimals, block_number)
    SELECT 'rcf_unverified_' || c.environment || '_' || c.shortcode || '_' || c.trans_id, c.store_id, c.environment, ${q.rail},
      c.shortcode || ':' || c.trans_id, 'payment_link', c.link_id, NULL, 'unverified_payment', 'noted', trunc(c.amount), 0, 0, trunc(c.amount), 0, 0
    FROM mpesa_c2b_payments c JOIN mobile_money_connections m USING (store_id, environment)
    WHERE c.state = 'awaiting_evidence'
      AND (m.c2b_pull_registered_at IS NULL OR c.received_at < now() - make_interval(secs => ${reachSeconds}))
      AND NOT EXISTS (SELECT 1 FROM reconciliation_findings f WHERE f.id = 'rcf_unverified_' || c.environment || '_' || c.shortcode || '_' || c.trans_id)
    ORDER BY c.received_at
    LIMIT ${q.batch}
    ON CONFLICT (id) DO NOTHING RETURNING id`);
  return created.length;
}

const c2bSettings = z.object({
  settles_alone: z.boolean(),
  unallocated_allowed: z.boolean(),
  pull_registered_at: z.string().nullable(),
  pull_error: z.string().nullable(),
  pulled_at: z.string().nullable(),
});
/** A connection's C2B policy and its Pull Transactions registration, as a page shows them. */
export async function findC2bSettings(db: CommonQueryMethods, storeId: string, environment: Environment) {
  return db.maybeOne(sql.type(c2bSettings)`
    SELECT c2b_settles_alone AS settles_alone, c2b_unallocated_allowed AS unallocated_allowed, c2b_pull_registered_at::text AS pull_registered_at,
      c2b_pull_error AS pull_error, c2b_pulled_at::text AS pulled_at
    FROM mobile_money_connections WHERE store_id = ${storeId} AND environment = ${environment}`);
}

/** Keeps a Pull Transactions notice's summary, and lets those older than `keepDays` go. */
export async function recordPullNotice(db: CommonQueryMethods, n: { shortcode: string | null; summary: Record<string, string> }, keepDays: number): Promise<void> {
  await db.query(sql.unsafe`INSERT INTO mpesa_pull_notices (shortcode, summary) VALUES (${n.shortcode}, ${sql.jsonb(n.summary)})`);
  await db.query(sql.unsafe`DELETE FROM mpesa_pull_notices WHERE received_at < now() - make_interval(days => ${keepDays})`);
}
