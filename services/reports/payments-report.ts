import { Readable } from 'node:stream';
import type { CommonQueryMethods } from 'slonik';
import { reportBatch, reportTotals, type ReportCursor, type ReportPeriod, type ReportRow } from '../../db/report-repo.js';
import { csvRow } from '../../domain/csv.js';
import { roundKesHalfEven } from '../../domain/kes-value.js';
import { formatUnits } from '../../domain/money.js';
import { shownPayer } from '../../domain/phone.js';
import { amountUnitOf } from '../../rails/methods.js';

/**
 * The payments export (`GET /v1/reports/payments`, the dashboard's Reports page; docs/reports.md):
 * one record per payment counted in the period (every confirmed payment of a payment link or an
 * invoice: on time, under, over, late, after a cancel, or a duplicate after the link confirmed),
 * read in keyset batches and streamed, CSV or JSON, in flat memory.
 */

/** How a payment counted (its disposition), as the books name it. */
const paymentKinds: Record<string, string> = {
  payment: 'on_time', underpaid: 'under', overpaid: 'over', late: 'late', after_cancel: 'after_cancel', duplicate: 'duplicate',
};

export interface PaymentRecord {
  countedAt: string;
  type: 'payment_link' | 'invoice';
  linkId: string;
  merchantRef: string | null;
  rail: string;
  /** In the rail's unit (`currency`), exact. */
  amount: string | null;
  currency: string;
  /** Whole shillings, rounded half to even; null when no rate was available when counted. */
  kesValue: string | null;
  /** Exact: amount × rate. */
  kesValueExact: string | null;
  kesRate: string | null;
  kesRateSources: string | null;
  kesNote: string | null;
  /** M-Pesa receipt or transaction hash. */
  reference: string | null;
  /** Masked phone number (M-Pesa) or sender address. */
  payer: string | null;
  paymentKind: string;
  linkStatus: string;
}

/** The CSV columns, in order, with the record field each one shows. */
export const reportColumns: readonly (readonly [string, keyof PaymentRecord])[] = [
  ['counted_at', 'countedAt'],
  ['type', 'type'],
  ['link_id', 'linkId'],
  ['merchant_ref', 'merchantRef'],
  ['rail', 'rail'],
  ['amount', 'amount'],
  ['currency', 'currency'],
  ['kes_value', 'kesValue'],
  ['kes_value_exact', 'kesValueExact'],
  ['kes_rate', 'kesRate'],
  ['kes_rate_sources', 'kesRateSources'],
  ['kes_note', 'kesNote'],
  ['reference', 'reference'],
  ['payer', 'payer'],
  ['payment_kind', 'paymentKind'],
  ['link_status', 'linkStatus'],
];

export function paymentRecord(r: ReportRow): PaymentRecord {
  return {
    countedAt: r.counted_at,
    type: r.owner_kind,
    linkId: r.link_id,
    merchantRef: r.merchant_ref,
    rail: r.rail,
    amount: r.amount_minor === null || r.decimals === null ? null : formatUnits(BigInt(r.amount_minor), r.decimals),
    currency: amountUnitOf(r.rail),
    kesValue: r.kes_value === null ? null : roundKesHalfEven(r.kes_value),
    kesValueExact: r.kes_value === null ? null : trimDecimal(r.kes_value),
    kesRate: r.kes_rate === null ? null : trimDecimal(r.kes_rate),
    kesRateSources: r.kes_rate_source,
    kesNote: r.kes_value === null ? (r.kes_missing_reason ?? 'no KES value recorded') : null,
    reference: r.external_id,
    payer: shownPayer(r.payer),
    paymentKind: paymentKinds[r.disposition ?? ''] ?? r.disposition ?? 'unknown',
    linkStatus: r.link_status,
  };
}

/** "1358.17500" → "1358.175", "130.000000" → "130" (PostgreSQL keeps numeric scales). */
function trimDecimal(v: string): string {
  return v.includes('.') ? v.replace(/0+$/, '').replace(/\.$/, '') : v;
}

/** Rows fetched per query: a bounded batch, the next one read only when the reply has taken this one. */
export const reportBatchSize = 2_000;

/** Every payment counted in the period, oldest first, a batch at a time. */
export async function* paymentBatches(db: CommonQueryMethods, period: ReportPeriod, batchSize = reportBatchSize): AsyncGenerator<PaymentRecord[]> {
  let after: ReportCursor | null = null;
  for (;;) {
    const rows = await reportBatch(db, period, after, batchSize);
    if (rows.length > 0) yield rows.map(paymentRecord);
    if (rows.length < batchSize) return;
    const last = rows[rows.length - 1]!;
    after = { at: last.cursor_at, linkId: last.link_id, paymentKey: last.payment_key };
  }
}

/** The UTF-8 byte-order mark: spreadsheets (Excel) then read the file as UTF-8. */
const bom = '\uFEFF';

/**
 * The export as a stream of text chunks (one per batch). `Readable.from` pulls the next batch
 * only when the consumer (the HTTP reply) has room: backpressure, so memory stays flat.
 */
export function paymentsReportStream(db: CommonQueryMethods, period: ReportPeriod, format: 'csv' | 'json'): Readable {
  return Readable.from(format === 'csv' ? csvChunks(db, period) : jsonChunks(db, period), { objectMode: false });
}

async function* csvChunks(db: CommonQueryMethods, period: ReportPeriod): AsyncGenerator<string> {
  yield bom + csvRow(reportColumns.map(([name]) => name));
  for await (const batch of paymentBatches(db, period)) {
    let chunk = '';
    for (const record of batch) chunk += csvRow(reportColumns.map(([, field]) => record[field]));
    yield chunk;
  }
}

async function* jsonChunks(db: CommonQueryMethods, period: ReportPeriod): AsyncGenerator<string> {
  yield `{"from":${JSON.stringify(period.from.toISOString())},"to":${JSON.stringify(period.to.toISOString())},"data":[`;
  let first = true;
  for await (const batch of paymentBatches(db, period)) {
    let chunk = '';
    for (const record of batch) {
      chunk += (first ? '\n' : ',\n') + JSON.stringify(record);
      first = false;
    }
    yield chunk;
  }
  yield '\n]}\n';
}

export interface ReportTotalDto {
  rail: string;
  currency: string;
  payments: number;
  /** In `currency`, exact. */
  amount: string;
  /** The sum of the rows' whole-shilling KES values. */
  kesValue: string;
  /** Payments counted with no KES value (no rate then): not in `kesValue`. */
  withoutKesValue: number;
}

/** Totals per rail and currency of the period: each equals the sum of its rows in the export. */
export async function paymentsReportTotals(db: CommonQueryMethods, period: ReportPeriod): Promise<ReportTotalDto[]> {
  return (await reportTotals(db, period)).map((t) => ({
    rail: t.rail,
    currency: amountUnitOf(t.rail),
    payments: t.payments,
    amount: formatUnits(BigInt(t.amount_minor), t.decimals ?? 0),
    kesValue: t.kes_value,
    withoutKesValue: t.without_kes,
  }));
}
