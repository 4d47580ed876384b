import { sql, type CommonQueryMethods } from 'slonik';
import { z } from 'zod';
import type { Environment } from '../domain/environment.js';

/** M-Pesa C2B (paybill and till payments from the M-Pesa menu): registrations, confirmations, suspicious posts. */
const env = z.enum(['test', 'live']);

export async function findLinkAccountRef(db: CommonQueryMethods, linkId: string): Promise<string | null> {
  return (await db.maybeOneFirst(sql.type(z.object({ r: z.string().nullable() }))`
    SELECT mobile_money_account_ref AS r FROM payment_links WHERE id = ${linkId}`)) ?? null;
}

export interface C2bRegistrationRecord {
  storeId: string;
  environment: Environment;
  shortcode: string;
  /** Replaced only when Daraja accepted the URLs holding the new token (a refusal keeps the working ones). */
  accepted: { tokenHash: Buffer; apiVersion: string; response: unknown } | null;
  error: string | null;
}

export async function saveC2bRegistration(db: CommonQueryMethods, r: C2bRegistrationRecord): Promise<void> {
  if (r.accepted) {
    await db.query(sql.unsafe`
      INSERT INTO mpesa_c2b_registrations (store_id, environment, shortcode, token_hash, api_version, registered_at, response, error)
      VALUES (${r.storeId}, ${r.environment}, ${r.shortcode}, ${sql.binary(r.accepted.tokenHash)}, ${r.accepted.apiVersion}, now(),
        ${sql.jsonb(r.accepted.response as never)}, NULL)
      ON CONFLICT (store_id, environment) DO UPDATE SET shortcode = EXCLUDED.shortcode, token_hash = EXCLUDED.token_hash,
        api_version = EXCLUDED.api_version, registered_at = now(), response = EXCLUDED.response, error = NULL, updated_at = now()`);
    return;
  }
  await db.query(sql.unsafe`
    UPDATE mpesa_c2b_registrations SET error = ${r.error}, updated_at = now()
    WHERE store_id = ${r.storeId} AND environment = ${r.environment}`);
}

const registrationView = z.object({
  shortcode: z.string(),
  registered_at: z.string().nullable(),
  api_version: z.string().nullable(),
  error: z.string().nullable(),
  registered_shortcode: z.string().nullable(),
});
/** The C2B registration of a connection as a page or the API shows it. */
export async function findC2bRegistration(db: CommonQueryMethods, storeId: string, environment: Environment) {
  return db.maybeOne(sql.type(registrationView)`
    SELECT c.shortcode, r.registered_at, r.api_version, r.error, r.shortcode AS registered_shortcode
    FROM mobile_money_connections c LEFT JOIN mpesa_c2b_registrations r USING (store_id, environment)
    WHERE c.store_id = ${storeId} AND c.environment = ${environment}`);
}

const tokenOwner = z.object({
  store_id: z.string(),
  environment: env,
  shortcode: z.string(),
  settles_alone: z.boolean(),
  unallocated_allowed: z.boolean(),
});
export type C2bTokenOwner = z.infer<typeof tokenOwner>;

/** Whose URLs a token opens (looked up by its hash), with the store's C2B policy. */
export async function findC2bTokenOwner(db: CommonQueryMethods, tokenHash: Buffer): Promise<C2bTokenOwner | null> {
  return db.maybeOne(sql.type(tokenOwner)`
    SELECT r.store_id, r.environment, r.shortcode, c.c2b_settles_alone AS settles_alone, c.c2b_unallocated_allowed AS unallocated_allowed
    FROM mpesa_c2b_registrations r JOIN mobile_money_connections c USING (store_id, environment)
    WHERE r.token_hash = ${sql.binary(tokenHash)}`);
}

const linkByRef = z.object({ id: z.string(), status: z.string(), expires_at: z.string(), mobile_money_amount: z.number().nullable() });
export async function findLinkByAccountRef(db: CommonQueryMethods, storeId: string, environment: Environment, ref: string) {
  return db.maybeOne(sql.type(linkByRef)`
    SELECT id, status, expires_at, mobile_money_amount FROM payment_links
    WHERE store_id = ${storeId} AND environment = ${environment} AND mobile_money_account_ref = ${ref}`);
}

export const c2bStates = ['matched', 'unallocated', 'awaiting_evidence', 'counted_as_prompt', 'disputed', 'refund_outside'] as const;
export const c2bRow = z.object({
  id: z.string(),
  store_id: z.string(),
  environment: env,
  shortcode: z.string(),
  trans_id: z.string(),
  transaction_type: z.string().nullable(),
  trans_time: z.string().nullable(),
  amount: z.string(),
  bill_ref: z.string().nullable(),
  account_ref: z.string().nullable(),
  link_id: z.string().nullable(),
  msisdn: z.string().nullable(),
  payer_name: z.string().nullable(),
  state: z.enum(c2bStates),
  fingerprint: z.string(),
  received_at: z.string(),
  assigned_by: z.string().nullable().default(null),
  assigned_at: z.string().nullable().default(null),
  refund_marked_by: z.string().nullable().default(null),
  refund_marked_at: z.string().nullable().default(null),
  refund_note: z.string().nullable().default(null),
});
export type C2bPaymentRow = z.infer<typeof c2bRow>;
export type NewC2bPayment = Omit<C2bPaymentRow, 'id' | 'received_at' | 'assigned_by' | 'assigned_at' | 'refund_marked_by' | 'refund_marked_at' | 'refund_note'> & { body: unknown };
export const c2bColumns = sql.fragment`id::text, store_id, environment, shortcode, trans_id, transaction_type, trans_time, amount::text, bill_ref,
  account_ref, link_id, msisdn, payer_name, state, fingerprint, received_at, assigned_by, assigned_at, refund_marked_by, refund_marked_at, refund_note`;

/** Stores a confirmation once per (environment, shortcode, TransID); `stored` false returns the earlier one. */
export async function recordC2bPayment(db: CommonQueryMethods, p: NewC2bPayment): Promise<{ stored: boolean; row: C2bPaymentRow }> {
  const inserted = await db.maybeOne(sql.type(c2bRow)`
    INSERT INTO mpesa_c2b_payments (store_id, environment, shortcode, trans_id, transaction_type, trans_time, amount, bill_ref, account_ref,
      link_id, msisdn, payer_name, state, fingerprint, body)
    VALUES (${p.store_id}, ${p.environment}, ${p.shortcode}, ${p.trans_id}, ${p.transaction_type}, ${p.trans_time}, ${p.amount}, ${p.bill_ref},
      ${p.account_ref}, ${p.link_id}, ${p.msisdn}, ${p.payer_name}, ${p.state}, ${p.fingerprint}, ${sql.jsonb(p.body as never)})
    ON CONFLICT (environment, shortcode, trans_id) DO NOTHING
    RETURNING ${c2bColumns}`);
  if (inserted) return { stored: true, row: inserted };
  const row = await db.one(sql.type(c2bRow)`
    SELECT ${c2bColumns} FROM mpesa_c2b_payments WHERE environment = ${p.environment} AND shortcode = ${p.shortcode} AND trans_id = ${p.trans_id}`);
  return { stored: false, row };
}

export async function findC2bPayment(db: CommonQueryMethods, shortcode: string, transId: string): Promise<C2bPaymentRow | null> {
  return db.maybeOne(sql.type(c2bRow)`SELECT ${c2bColumns} FROM mpesa_c2b_payments WHERE shortcode = ${shortcode} AND trans_id = ${transId}
    ORDER BY id LIMIT 1`);
}

export async function setC2bState(db: CommonQueryMethods, id: string, state: C2bPaymentRow['state']): Promise<void> {
  await db.query(sql.unsafe`UPDATE mpesa_c2b_payments SET state = ${state} WHERE id = ${id}`);
}

export async function recordSuspiciousC2bPost(
  db: CommonQueryMethods,
  p: { storeId: string | null; environment: Environment | null; kind: 'unknown_token' | 'altered' | 'malformed' | 'pull_mismatch'; transId: string | null; reason: string; body: unknown },
): Promise<void> {
  await db.query(sql.unsafe`
    INSERT INTO mpesa_c2b_suspicious_posts (store_id, environment, kind, trans_id, reason, body)
    VALUES (${p.storeId}, ${p.environment}, ${p.kind}, ${p.transId}, ${p.reason.slice(0, 500)}, ${p.body === undefined ? null : sql.jsonb(p.body as never)})`);
}

/** Whether a believable STK callback of one of this link's prompts names this receipt: the prompt counts it. */
export async function promptOfLinkWithReceipt(db: CommonQueryMethods, linkId: string, receipt: string): Promise<string | null> {
  return db.maybeOneFirst(sql.type(z.object({ id: z.string() }))`
    SELECT c.checkout_request_id AS id FROM mpesa_callbacks c JOIN mpesa_stk_requests r USING (checkout_request_id)
    WHERE r.link_id = ${linkId} AND c.receipt = ${receipt} AND c.suspicious_reason IS NULL LIMIT 1`);
}

/** The C2B payment with this TransID already counted by the link (its payment key), if any. */
export async function countedC2bWithTransId(db: CommonQueryMethods, linkId: string, transId: string): Promise<string | null> {
  return db.maybeOneFirst(sql.type(z.object({ k: z.string() }))`
    SELECT payment_key AS k FROM link_payments
    WHERE link_id = ${linkId} AND payment_key LIKE 'c2b:%' AND external_id = ${transId} AND state = 'confirmed' LIMIT 1`);
}

/** The store's C2B policy (docs/mobile-money.md, "Trust policy"); fields not given stay as they are. */
export async function setC2bPolicy(
  db: CommonQueryMethods,
  storeId: string,
  environment: Environment,
  p: { c2bSettlesAlone?: boolean; c2bUnallocatedAllowed?: boolean },
): Promise<void> {
  if (p.c2bSettlesAlone === undefined && p.c2bUnallocatedAllowed === undefined) return;
  await db.query(sql.unsafe`
    UPDATE mobile_money_connections SET
      c2b_settles_alone = COALESCE(${p.c2bSettlesAlone ?? null}::boolean, c2b_settles_alone),
      c2b_unallocated_allowed = COALESCE(${p.c2bUnallocatedAllowed ?? null}::boolean, c2b_unallocated_allowed)
    WHERE store_id = ${storeId} AND environment = ${environment}`);
}

/** The store's unallocated C2B payments, newest first, one page. */
/** A page of the store's unallocated payments (or of those marked for refund outside Malipo), newest first. */
export async function listUnallocatedC2b(
  db: CommonQueryMethods, storeId: string, environment: Environment, limit: number, page: number, state: 'unallocated' | 'refund_outside' = 'unallocated',
) {
  const rows = await db.any(sql.type(c2bRow)`
    SELECT ${c2bColumns} FROM mpesa_c2b_payments WHERE store_id = ${storeId} AND environment = ${environment} AND state = ${state}
    ORDER BY received_at DESC, id DESC LIMIT ${limit} OFFSET ${(page - 1) * limit}`);
  const total = await db.oneFirst(sql.type(z.object({ n: z.number() }))`
    SELECT count(*)::int AS n FROM mpesa_c2b_payments WHERE store_id = ${storeId} AND environment = ${environment} AND state = ${state}`);
  return { rows, total };
}

/** Marks an unallocated payment for refund outside Malipo, once; null when it is no longer unallocated. */
export async function markC2bForRefund(db: CommonQueryMethods, id: string, by: string, note: string | null): Promise<C2bPaymentRow | null> {
  return db.maybeOne(sql.type(c2bRow)`
    UPDATE mpesa_c2b_payments SET state = 'refund_outside', refund_marked_by = ${by}, refund_marked_at = now(), refund_note = ${note}
    WHERE id = ${id} AND state = 'unallocated' RETURNING ${c2bColumns}`);
}

export async function findStoreC2bPayment(db: CommonQueryMethods, storeId: string, environment: Environment, transId: string): Promise<C2bPaymentRow | null> {
  return db.maybeOne(sql.type(c2bRow)`
    SELECT ${c2bColumns} FROM mpesa_c2b_payments WHERE store_id = ${storeId} AND environment = ${environment} AND trans_id = ${transId}
    ORDER BY id LIMIT 1`);
}

/** Assigns an unallocated payment to a link (audited); false when it was not unallocated any more. */
export async function assignC2bPayment(db: CommonQueryMethods, id: string, linkId: string, assignedBy: string): Promise<C2bPaymentRow | null> {
  return db.maybeOne(sql.type(c2bRow)`
    UPDATE mpesa_c2b_payments SET link_id = ${linkId}, state = 'matched', assigned_by = ${assignedBy}, assigned_at = now()
    WHERE id = ${id} AND state = 'unallocated' RETURNING ${c2bColumns}`);
}

/** Undoes an assignment whose link no longer watches for payments. */
export async function unassignC2bPayment(db: CommonQueryMethods, id: string): Promise<void> {
  await db.query(sql.unsafe`UPDATE mpesa_c2b_payments SET link_id = NULL, state = 'unallocated', assigned_by = NULL, assigned_at = NULL WHERE id = ${id}`);
}
