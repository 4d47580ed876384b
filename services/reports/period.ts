import { AppError } from '../../domain/errors.js';
import type { Environment } from '../../domain/environment.js';
import type { ReportPeriod } from '../../db/report-repo.js';

export type { ReportPeriod };

/** A day (`2026-11-01`, midnight UTC) or an ISO 8601 time with its offset. */
export const instantPattern = /^\d{4}-\d{2}-\d{2}(T\d{2}:\d{2}(:\d{2}(\.\d{1,6})?)?(Z|[+-]\d{2}:\d{2}))?$/;

/** Whether the text is such a day or time, and the day exists (Date.parse takes 2026-02-30 for 2 March). */
export function isReportInstant(v: string): boolean {
  if (!instantPattern.test(v)) return false;
  const [y, m, d] = v.slice(0, 10).split('-').map(Number) as [number, number, number];
  const day = new Date(Date.UTC(y, m - 1, d));
  return !Number.isNaN(Date.parse(v)) && day.getUTCMonth() === m - 1 && day.getUTCDate() === d;
}

/**
 * The export's period for a store and environment: [from, to). Each a day or an ISO time
 * (checked by the caller's schema, or here); `to` must come after `from`. Refusals are the
 * documented 400 naming the field.
 */
export function reportPeriod(auth: { storeId: string; environment: Environment }, q: { from: string; to: string }): ReportPeriod {
  for (const param of ['from', 'to'] as const) {
    if (!isReportInstant(q[param])) throw new AppError('invalid_field', `Invalid '${param}': a date (YYYY-MM-DD, UTC) or an ISO 8601 time with offset.`, param);
  }
  const from = new Date(q.from);
  const to = new Date(q.to);
  if (from.getTime() >= to.getTime()) throw new AppError('invalid_field', "Invalid 'to': must be after 'from'.", 'to');
  return { storeId: auth.storeId, environment: auth.environment, from, to };
}
