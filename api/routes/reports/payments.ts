import { z } from 'zod/v4';
import { AppError } from '../../../domain/errors.js';
import { paymentsReportStream, paymentsReportTotals } from '../../../services/reports/payments-report.js';
import { defineRoute } from '../../route.js';

/** Whether the day exists (Date.parse takes 2026-02-30 for 2 March). */
function isRealDate(v: string): boolean {
  const [y, m, d] = v.slice(0, 10).split('-').map(Number) as [number, number, number];
  const day = new Date(Date.UTC(y, m - 1, d));
  return !Number.isNaN(Date.parse(v)) && day.getUTCMonth() === m - 1 && day.getUTCDate() === d;
}

/** A day (`2026-11-01`, midnight UTC) or an ISO 8601 time with its offset. */
const instant = (what: string) =>
  z
    .string()
    .regex(/^\d{4}-\d{2}-\d{2}(T\d{2}:\d{2}(:\d{2}(\.\d{1,6})?)?(Z|[+-]\d{2}:\d{2}))?$/, 'a date (YYYY-MM-DD, UTC) or an ISO 8601 time with offset')
    .refine(isRealDate, 'not a real date')
    .describe(what);

const periodQuery = {
  from: instant('Start of the period, inclusive: payments counted at or after it'),
  to: instant('End of the period, exclusive: payments counted before it'),
};

/** The key's store and environment over [from, to); from must come before to. */
function period(auth: { storeId: string; environment: 'test' | 'live' }, q: { from: string; to: string }) {
  const from = new Date(q.from);
  const to = new Date(q.to);
  if (from.getTime() >= to.getTime()) throw new AppError('invalid_field', "Invalid 'to': must be after 'from'.", 'to');
  return { storeId: auth.storeId, environment: auth.environment, from, to };
}

export const paymentsReportRoute = defineRoute({
  method: 'GET',
  url: '/v1/reports/payments',
  operationId: 'exportPaymentsReport',
  summary: "Every payment counted in a period, in the key's store and environment, with its KES value: CSV or JSON, streamed (docs/reports.md)",
  tags: ['Reports'],
  auth: 'secret',
  query: z.strictObject({
    ...periodQuery,
    format: z.enum(['csv', 'json']).default('csv').describe('csv (RFC 4180, UTF-8 with a byte-order mark) or json ({ from, to, data: [...] })'),
  }),
  responses: {
    200: { description: 'The payments, oldest first: text/csv or application/json, streamed. Columns and units: docs/reports.md' },
  },
  handler: async ({ deps, auth, query, reply }) => {
    const p = period(auth, query);
    const name = `payments-${auth.environment}-${query.from.slice(0, 10)}-${query.to.slice(0, 10)}.${query.format}`;
    reply
      .header('content-type', query.format === 'csv' ? 'text/csv; charset=utf-8' : 'application/json; charset=utf-8')
      .header('content-disposition', `attachment; filename="${name}"`)
      .header('cache-control', 'no-store');
    return paymentsReportStream(deps.pool, p, query.format);
  },
});

const totalSchema = z.object({
  rail: z.string(),
  currency: z.string().describe("The rail's unit: KES or USDT"),
  payments: z.number().int(),
  amount: z.string().describe('Sum of the amounts, in currency, exact'),
  kesValue: z.string().describe("Sum of the rows' KES values, each rounded to the shilling half to even"),
  withoutKesValue: z.number().int().describe('Payments counted with no KES value (no rate then), not in kesValue'),
});

export const paymentsReportTotalsRoute = defineRoute({
  method: 'GET',
  url: '/v1/reports/payments/totals',
  operationId: 'paymentsReportTotals',
  summary: 'Totals per rail and currency of the payments export over the same period: each equals the sum of its rows',
  tags: ['Reports'],
  auth: 'secret',
  query: z.strictObject(periodQuery),
  responses: { 200: { description: 'Totals per rail', schema: z.object({ from: z.string(), to: z.string(), data: z.array(totalSchema) }) } },
  handler: async ({ deps, auth, query }) => {
    const p = period(auth, query);
    return { from: p.from.toISOString(), to: p.to.toISOString(), data: await paymentsReportTotals(deps.pool, p) };
  },
});
