import type { Logger } from 'pino';
import type { DatabasePool } from 'slonik';
import { recordPullNotice } from '../../db/mpesa-pull-repo.js';

/** At most this many top-level fields of a notice are kept, each value cut to `maxValueLength`. */
const maxFields = 20;
const maxValueLength = 200;
const maxKeyLength = 64;
/** Notices are kept this long (for whoever looks into a Pull registration), then deleted. */
export const pullNoticeKeepDays = 30;

/**
 * Safaricom may post notices about a shortcode's Pull Transactions registration to the
 * CallBackURL given when registering it (docs/mobile-money.md, "Backfill"). Daraja documents no
 * shape for them and the URL carries no credential (anyone can post to it), so a notice changes
 * nothing: it is acknowledged and a bounded summary is kept — its first top-level fields whose
 * values are strings, numbers or booleans, cut short — with the shortcode it names, if any.
 */
export function summarisePullNotice(body: unknown): { shortcode: string | null; summary: Record<string, string> } {
  const summary: Record<string, string> = {};
  if (body && typeof body === 'object' && !Array.isArray(body)) {
    for (const [key, value] of Object.entries(body).slice(0, maxFields)) {
      if (typeof value === 'string' || typeof value === 'number' || typeof value === 'boolean') {
        summary[key.slice(0, maxKeyLength)] = String(value).slice(0, maxValueLength);
      }
    }
  }
  const shortcode = summary.ShortCode ?? summary.shortCode ?? summary.Shortcode ?? null;
  return { shortcode: shortcode !== null && /^\d{5,7}$/.test(shortcode) ? shortcode : null, summary };
}

export async function receivePullNotice(deps: { pool: DatabasePool; logger?: Pick<Logger, 'info'> }, body: unknown): Promise<{ ResultCode: '0'; ResultDesc: 'Accepted' }> {
  const notice = summarisePullNotice(body);
  await recordPullNotice(deps.pool, notice, pullNoticeKeepDays);
  deps.logger?.info({ shortcode: notice.shortcode, fields: Object.keys(notice.summary).length }, 'M-Pesa Pull Transactions notice received');
  return { ResultCode: '0', ResultDesc: 'Accepted' };
}
