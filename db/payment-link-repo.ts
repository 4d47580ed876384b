import { sql, type CommonQueryMethods, type DatabasePool } from 'slonik';
import { z } from 'zod';
import type { Environment } from '../domain/environment.js';
import type { LinkStatus } from '../domain/states.js';

/** The payment_links row as the code sees it (amounts as strings, times as ISO strings). */
export const linkRowSchema = z.object({
  id: z.string(),
  store_id: z.string(),
  environment: z.enum(['test', 'live']),
  status: z.enum(['PENDING', 'PROCESSING', 'CONFIRMED', 'EXPIRED', 'CANCELLED']),
  usdt_amount: z.string(),
  mobile_money_amount: z.number().nullable(),
  kes_per_usdt: z.string().nullable(),
  rate_source: z.string().nullable(),
  enabled_rails: z.array(z.string()),
  tron_address: z.string().nullable(),
  evm_address: z.string().nullable(),
  solana_address: z.string().nullable(),
  solana_reference: z.string().nullable(),
  solana_mint: z.string().nullable(),
  mobile_money_shortcode: z.string().nullable(),
  /** The account reference a paybill payer types (migration 0031); null without a prompted rail. */
  mobile_money_account_ref: z.string().nullable().default(null),
  description: z.string().nullable(),
  merchant_ref: z.string().nullable(),
  metadata: z.any(),
  redirect_url: z.string().nullable(),
  expires_at: z.string(),
  created_at: z.string(),
  confirmed_rail: z.string().nullable(),
  confirmed_at: z.string().nullable(),
  external_id: z.string().nullable(),
  payer: z.string().nullable(),
  amount_received_minor: z.string(),
  simulated: z.boolean(),
  kind: z.enum(['payment_link', 'invoice']),
  /** Whether the workflow that owns the row was started (migration 0021): false until it is. */
  workflow_started: z.boolean(),
  /** The creating request's id, which the workflow's memo, logs and spans carry (migration 0030); null before it. */
  correlation_id: z.string().nullable().default(null),
});
export type LinkRow = z.infer<typeof linkRowSchema>;

const columns = sql.fragment`id, store_id, environment, status, usdt_amount, mobile_money_amount, kes_per_usdt, rate_source,
  enabled_rails, tron_address, evm_address, solana_address, solana_reference, solana_mint, mobile_money_shortcode, mobile_money_account_ref, description,
  merchant_ref, metadata, redirect_url, expires_at, created_at, confirmed_rail, confirmed_at, external_id, payer,
  amount_received_minor, simulated, kind, workflow_started, correlation_id`;

export interface NewLink {
  id: string;
  kind: 'payment_link' | 'invoice';
  storeId: string;
  environment: Environment;
  usdtAmount: string;
  mobileMoneyAmount: number | null;
  kesPerUsdt: string | null;
  rateSource: string | null;
  enabledRails: string[];
  addressIndex: number | null;
  tronAddress: string | null;
  evmAddress: string | null;
  solanaAddress: string | null;
  solanaReference: string | null;
  solanaMint: string | null;
  mobileMoneyShortcode: string | null;
  mobileMoneyAccountRef?: string | null;
  description: string | null;
  merchantRef: string | null;
  metadata: unknown;
  redirectUrl: string | null;
  expiresAt: string;
  watchUntil: string;
  /** Follows the link through logs, traces and its workflow's memo (docs/tracing.md). */
  correlationId?: string | null;
}

/**
 * The link and the addresses its watchers look for, in one statement (so atomically, with no
 * transaction held open across round trips).
 */
export async function insertLink(db: CommonQueryMethods, l: NewLink): Promise<LinkRow> {
  const watched: [string, string][] = [];
  if (l.tronAddress) watched.push(['tron', l.tronAddress]);
  if (l.evmAddress) watched.push(['evm', l.evmAddress.toLowerCase()]);
  if (l.solanaReference) watched.push(['sol_ref', l.solanaReference]);
  return db.one(sql.type(linkRowSchema)`
    WITH link AS (
      INSERT INTO payment_links (id, kind, store_id, environment, status, usdt_amount, mobile_money_amount, kes_per_usdt, rate_source,
        enabled_rails, address_index, tron_address, evm_address, solana_address, solana_reference, solana_mint, mobile_money_shortcode, mobile_money_account_ref,
        description, merchant_ref, metadata, redirect_url, expires_at, correlation_id)
      VALUES (${l.id}, ${l.kind}, ${l.storeId}, ${l.environment}, 'PENDING', ${l.usdtAmount}, ${l.mobileMoneyAmount}, ${l.kesPerUsdt}, ${l.rateSource},
        ${sql.array(l.enabledRails, 'text')}, ${l.addressIndex}, ${l.tronAddress}, ${l.evmAddress}, ${l.solanaAddress}, ${l.solanaReference}, ${l.solanaMint},
        ${l.mobileMoneyShortcode}, ${l.mobileMoneyAccountRef ?? null}, ${l.description}, ${l.merchantRef}, ${l.metadata === null ? null : sql.jsonb(l.metadata as never)},
        ${l.redirectUrl}, ${l.expiresAt}, ${l.correlationId ?? null})
      RETURNING ${columns}),
    watched AS (
      INSERT INTO watched_addresses (family, environment, address, owner_kind, owner_id, store_id, watch_until)
      SELECT w.family, link.environment, w.address, link.kind, link.id, link.store_id, ${l.watchUntil}
      FROM link, unnest(${sql.array(watched.map((w) => w[0]), 'text')}, ${sql.array(watched.map((w) => w[1]), 'text')}) AS w (family, address))
    SELECT * FROM link`);
}

/**
 * Records that the workflows of these links and invoices run (or ran), one statement for a batch
 * of starts: the starter leaves them alone from now on.
 */
export async function markWorkflowsStarted(db: CommonQueryMethods, ids: readonly string[]): Promise<void> {
  await db.query(sql.unsafe`UPDATE payment_links SET workflow_started = true WHERE id = ANY(${sql.array(ids, 'text')}) AND NOT workflow_started`);
}

/** Links and invoices whose workflow was not started, created over `olderThanSeconds` ago, oldest first. */
export async function unstartedRequests(db: CommonQueryMethods, olderThanSeconds: number, limit: number): Promise<readonly LinkRow[]> {
  return db.any(sql.type(linkRowSchema)`
    SELECT ${columns} FROM payment_links
    WHERE NOT workflow_started AND created_at < now() - ${olderThanSeconds} * interval '1 second'
    ORDER BY created_at LIMIT ${limit}`);
}

/**
 * How many links and invoices created over `olderThanSeconds` ago still wait for their workflow,
 * and the age of the oldest in seconds (0 when none): read from the partial index of unstarted rows.
 */
export async function unstartedBacklog(db: CommonQueryMethods, olderThanSeconds: number): Promise<{ count: number; oldestSeconds: number }> {
  const row = await db.one(sql.type(z.object({ n: z.number(), oldest: z.number() }))`
    SELECT count(*)::int AS n, COALESCE(EXTRACT(EPOCH FROM now() - min(created_at)), 0)::float8 AS oldest
    FROM payment_links WHERE NOT workflow_started AND created_at < now() - ${olderThanSeconds} * interval '1 second'`);
  return { count: row.n, oldestSeconds: row.oldest };
}

export async function deleteLink(db: CommonQueryMethods, id: string): Promise<void> {
  await db.query(sql.unsafe`DELETE FROM watched_addresses WHERE owner_id = ${id}`);
  await db.query(sql.unsafe`DELETE FROM payment_links WHERE id = ${id}`);
}

/** A link of this store and environment, or null: another store's link looks exactly like none. */
export async function findLink(db: CommonQueryMethods, storeId: string, env: Environment, id: string): Promise<LinkRow | null> {
  return db.maybeOne(sql.type(linkRowSchema)`
    SELECT ${columns} FROM payment_links WHERE id = ${id} AND store_id = ${storeId} AND environment = ${env} AND kind = 'payment_link'`);
}

export async function findLinkById(db: CommonQueryMethods, id: string): Promise<LinkRow | null> {
  return db.maybeOne(sql.type(linkRowSchema)`SELECT ${columns} FROM payment_links WHERE id = ${id}`);
}

export async function listLinks(
  pool: DatabasePool,
  q: { storeId: string; environment: Environment; status?: LinkStatus; merchantRef?: string; limit: number; page: number },
): Promise<{ rows: LinkRow[]; total: number }> {
  // An exact reference: served by payment_links_merchant_ref_idx (migration 0023), newest first.
  const filters = sql.fragment`${q.status ? sql.fragment`AND status = ${q.status}` : sql.fragment``}
    ${q.merchantRef !== undefined ? sql.fragment`AND merchant_ref = ${q.merchantRef}` : sql.fragment``}`;
  const [rows, total] = await Promise.all([
    pool.any(sql.type(linkRowSchema)`
      SELECT ${columns} FROM payment_links
      WHERE store_id = ${q.storeId} AND environment = ${q.environment} AND kind = 'payment_link' ${filters}
      ORDER BY created_at DESC, id DESC
      LIMIT ${q.limit} OFFSET ${(q.page - 1) * q.limit}`),
    pool.oneFirst(sql.type(z.object({ n: z.number() }))`
      SELECT count(*)::int AS n FROM payment_links
      WHERE store_id = ${q.storeId} AND environment = ${q.environment} AND kind = 'payment_link' ${filters}`),
  ]);
  return { rows: [...rows], total };
}

export const linkPaymentSchema = z.object({
  payment_key: z.string(),
  rail: z.string(),
  external_id: z.string().nullable(),
  payer: z.string().nullable(),
  amount_minor: z.string().nullable(),
  decimals: z.number().nullable(),
  state: z.string(),
  disposition: z.string().nullable(),
  failure_reason: z.string().nullable(),
  created_at: z.string(),
});
export type LinkPaymentRow = z.infer<typeof linkPaymentSchema>;

const linkWithPaymentsSchema = linkRowSchema.extend({ payments: z.array(z.unknown()) });
const checkoutLinkSchema = linkRowSchema.extend({
  store_name: z.string(), store_logo: z.string().nullable(), payments: z.array(z.unknown()), menu_payment: z.enum(['paybill', 'till']).nullable(),
  shortcode_type: z.enum(['paybill', 'till']).nullable(),
});

/**
 * A store's payment link with its payments, in one statement (the GET of a link): the payments
 * come as a JSON array built by PostgreSQL, parsed with the same row schema.
 */
export async function findLinkWithPayments(
  db: CommonQueryMethods, storeId: string, env: Environment, id: string,
): Promise<{ row: LinkRow; payments: LinkPaymentRow[] } | null> {
  const found = await db.maybeOne(sql.type(linkWithPaymentsSchema)`
    SELECT ${columns}, ${paymentsJson} AS payments
    FROM payment_links WHERE id = ${id}`);
  // The tenant check, here rather than in the WHERE clause: the same answer (another store's or
  // environment's link, or an invoice, is not found), and a statement planned in less time, with
  // only the primary key to consider (it is planned on every GET; pgbench: about 8 % less).
  if (!found || found.store_id !== storeId || found.environment !== env || found.kind !== 'payment_link') return null;
  const { payments, ...row } = found;
  return { row: row as LinkRow, payments: parsePayments(payments) };
}

/** The link's payments as one JSON array, oldest first, for reading a link and its payments in one statement. */
const paymentsJson = sql.fragment`COALESCE((
  SELECT json_agg(json_build_object(
    'payment_key', p.payment_key, 'rail', p.rail, 'external_id', p.external_id, 'payer', p.payer,
    'amount_minor', p.amount_minor::text, 'decimals', p.decimals, 'state', p.state, 'disposition', p.disposition,
    'failure_reason', p.failure_reason, 'created_at', p.created_at) ORDER BY p.created_at, p.payment_key)
  FROM link_payments p WHERE p.link_id = payment_links.id), '[]')`;

function parsePayments(payments: unknown[]): LinkPaymentRow[] {
  return payments.map((p) => {
    const r = linkPaymentSchema.parse(p);
    return { ...r, created_at: new Date(r.created_at).toISOString() };
  });
}

/**
 * A payment link with its store's name and, while it is open, its payments, in one statement:
 * the checkout's poll (public: the id is the secret). A closed link's payments are not read.
 */
export async function findCheckoutLinkWithPayments(
  db: CommonQueryMethods, id: string,
): Promise<{
  row: LinkRow; storeName: string; storeLogo: string | null; payments: LinkPaymentRow[]; menuPayment: 'paybill' | 'till' | null; shortcodeType: 'paybill' | 'till' | null;
} | null> {
  const found = await db.maybeOne(sql.type(checkoutLinkSchema)`
    SELECT ${columns}, (SELECT name FROM stores s WHERE s.id = payment_links.store_id) AS store_name,
      (SELECT l.sha256 || ' ' || l.content_type FROM store_logos l WHERE l.store_id = payment_links.store_id) AS store_logo,
      mm.menu_payment, mm.shortcode_type,
      CASE WHEN status IN ('PENDING', 'PROCESSING') THEN ${paymentsJson} ELSE '[]' END AS payments
    FROM payment_links
    LEFT JOIN LATERAL (
      SELECT c.shortcode_type,
        CASE WHEN EXISTS (SELECT 1 FROM mpesa_c2b_registrations r WHERE r.store_id = c.store_id AND r.environment = c.environment
          AND r.registered_at IS NOT NULL AND r.error IS NULL) THEN c.shortcode_type END AS menu_payment
      FROM mobile_money_connections c WHERE c.store_id = payment_links.store_id AND c.environment = payment_links.environment
    ) mm ON true
    WHERE id = ${id} AND kind = 'payment_link'`);
  if (!found) return null;
  // store_logo: "<sha256> <content type>" of the store's checkout logo (migration 0024), or null.
  // shortcode_type: whether the prompt is paid to a paybill or a till (the page names which);
  // menu_payment: the same, once Daraja took the shortcode's C2B URLs (migration 0031). One read of the store's connection row.
  const { payments, store_name, store_logo, menu_payment, shortcode_type, ...row } = found;
  return { row: row as LinkRow, storeName: store_name, storeLogo: store_logo, payments: parsePayments(payments), menuPayment: menu_payment, shortcodeType: shortcode_type };
}

export async function listLinkPayments(db: CommonQueryMethods, linkId: string): Promise<LinkPaymentRow[]> {
  return [...(await db.any(sql.type(linkPaymentSchema)`
    SELECT payment_key, rail, external_id, payer, amount_minor::text, decimals, state, disposition, failure_reason, created_at
    FROM link_payments WHERE link_id = ${linkId} ORDER BY created_at, payment_key`))];
}

/** A payment link and its store's name, for the public checkout (no tenant check: the id is the secret). */
export async function findCheckoutLink(db: CommonQueryMethods, id: string): Promise<{ row: LinkRow; storeName: string } | null> {
  const row = await db.maybeOne(sql.type(linkRowSchema.extend({ store_name: z.string() }))`
    SELECT ${columns}, (SELECT name FROM stores s WHERE s.id = payment_links.store_id) AS store_name
    FROM payment_links WHERE id = ${id} AND kind = 'payment_link'`);
  return row ? { row, storeName: row.store_name } : null;
}
