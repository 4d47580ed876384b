import { sql, type CommonQueryMethods } from 'slonik';
import { z } from 'zod';
import type { Environment } from '../domain/environment.js';

/**
 * The books: payments counted in a period, for exports (services/reports, docs/reports.md).
 * Read in keyset order (counted_at, link_id, payment_key), a batch at a time, on the
 * `link_payments_counted_idx` index (migration 0032): a million rows never sit in memory.
 */
export const reportRowSchema = z.object({
  link_id: z.string(),
  payment_key: z.string(),
  /** counted_at exactly as PostgreSQL prints it (microseconds kept): the keyset cursor. */
  cursor_at: z.string(),
  counted_at: z.string(),
  owner_kind: z.enum(['payment_link', 'invoice']),
  merchant_ref: z.string().nullable(),
  rail: z.string(),
  amount_minor: z.string().nullable(),
  decimals: z.number().nullable(),
  kes_value: z.string().nullable(),
  kes_rate: z.string().nullable(),
  kes_rate_source: z.string().nullable(),
  kes_missing_reason: z.string().nullable(),
  external_id: z.string().nullable(),
  payer: z.string().nullable(),
  disposition: z.string().nullable(),
  link_status: z.string(),
});
export type ReportRow = z.infer<typeof reportRowSchema>;

export interface ReportPeriod {
  storeId: string;
  environment: Environment;
  /** Inclusive. */
  from: Date;
  /** Exclusive. */
  to: Date;
}

export interface ReportCursor {
  at: string;
  linkId: string;
  paymentKey: string;
}

const inPeriod = (p: ReportPeriod) => sql.fragment`
  p.counted_at >= ${p.from.toISOString()}::timestamptz AND p.counted_at < ${p.to.toISOString()}::timestamptz
  AND l.store_id = ${p.storeId} AND l.environment = ${p.environment}`;

/** The next `limit` payments counted in the period after `after`, oldest first. */
export async function reportBatch(db: CommonQueryMethods, period: ReportPeriod, after: ReportCursor | null, limit: number): Promise<readonly ReportRow[]> {
  return db.any(sql.type(reportRowSchema)`
    SELECT p.link_id, p.payment_key, p.counted_at::text AS cursor_at,
      to_char(p.counted_at AT TIME ZONE 'UTC', 'YYYY-MM-DD"T"HH24:MI:SS.MS"Z"') AS counted_at,
      l.kind AS owner_kind, l.merchant_ref, p.rail, p.amount_minor::text, p.decimals,
      p.kes_value::text, p.kes_rate::text, p.kes_rate_source, p.kes_missing_reason,
      p.external_id, p.payer, p.disposition, l.status AS link_status
    FROM link_payments p JOIN payment_links l ON l.id = p.link_id
    WHERE ${inPeriod(period)}
      ${after ? sql.fragment`AND (p.counted_at, p.link_id, p.payment_key) > (${after.at}::timestamptz, ${after.linkId}, ${after.paymentKey})` : sql.fragment``}
    ORDER BY p.counted_at, p.link_id, p.payment_key
    LIMIT ${limit}`);
}

export const reportTotalSchema = z.object({
  rail: z.string(),
  decimals: z.number().nullable(),
  payments: z.number(),
  amount_minor: z.string(),
  /** The sum of each payment's KES value rounded to the shilling, half to even (as the rows show it). */
  kes_value: z.string(),
  without_kes: z.number(),
});
export type ReportTotal = z.infer<typeof reportTotalSchema>;

/**
 * Totals of the period per rail: count, amount in the rail's smallest unit, and KES as the rows
 * show it (each value rounded half-even to the shilling, then summed), so totals equal the rows.
 */
export async function reportTotals(db: CommonQueryMethods, period: ReportPeriod): Promise<readonly ReportTotal[]> {
  return db.any(sql.type(reportTotalSchema)`
    SELECT p.rail, max(p.decimals) AS decimals, count(*)::int AS payments, COALESCE(sum(p.amount_minor), 0)::text AS amount_minor,
      COALESCE(sum(CASE WHEN p.kes_value - floor(p.kes_value) = 0.5 AND mod(floor(p.kes_value), 2) = 0 THEN floor(p.kes_value)
                        ELSE round(p.kes_value) END), 0)::text AS kes_value,
      (count(*) FILTER (WHERE p.kes_value IS NULL))::int AS without_kes
    FROM link_payments p JOIN payment_links l ON l.id = p.link_id
    WHERE ${inPeriod(period)}
    GROUP BY p.rail ORDER BY p.rail`);
}
