import {
  findPullTarget, listPullTargets, markPulled, recordPulledC2bPayment, recordUnmatchedPullFinding, savePullRegistration, setPulledAt, settleAwaiting,
  type PullTarget,
} from '../../db/mpesa-pull-repo.js';
import { recordSuspiciousC2bPost, type C2bPaymentRow } from '../../db/mpesa-c2b-repo.js';
import type { Environment } from '../../domain/environment.js';
import { normalizeAccountRef } from '../../rails/mpesa/account-ref.js';
import { c2bFingerprint, isBuyGoods, wholeShillings, type C2bPost } from '../../rails/mpesa/c2b.js';
import { classifyDarajaError } from '../../rails/mpesa/daraja-errors.js';
import { mpesaFacts } from '../../rails/mpesa/facts.js';
import { openMerchantSession } from '../../rails/mpesa/merchant-session.js';
import {
  parsePullAnswer, pullAgreesWith, pullDate, pullQueryPath, pullReachMs, pullRegisterPath, type PulledRecord, type PullRegisterBody,
} from '../../rails/mpesa/pull.js';
import { announceUnallocated, signalLink, type C2bDeps } from './c2b-callbacks.js';
import { storeWithItsLink } from './c2b-match.js';

/**
 * Backfill by Safaricom's Pull Transactions API (issue 29, item 5; docs/mobile-money.md,
 * "Backfill"). For each store registered for it, the last window (within the API's 48-hour
 * reach, overlapping the previous pull) is read page by page, and each pulled record:
 * - whose confirmation is stored: corroborates it (an `awaiting_evidence` row that agrees on
 *   TransID, amount, shortcode and reference becomes `matched` and its link is told), or, when it
 *   disagrees, is recorded as suspicious (`pull_mismatch`) and the waiting row becomes `disputed`;
 * - whose confirmation never arrived: is stored from the pulled record (source `pull`) and
 *   processed as a confirmation: matched (its link is told) or unallocated (announced).
 * A pulled record that names no link is a reconciliation finding (`unmatched_payment`). TransID
 * is unique per shortcode, so pulling the same window twice counts nothing twice.
 */

/** Whatever one store's pull found (also what the activity returns: no secrets, no payer data). */
export interface PullSummary {
  storeId: string;
  environment: Environment;
  pulled: number;
  backfilled: number;
  corroborated: number;
  disputed: number;
  unmatched: number;
  problem: string | null;
}

/** Overlap with the previous window: a payment M-Pesa lists late is still read. */
const overlapMs = 60 * 60 * 1000;
/** A margin inside the 48-hour reach, so a query's StartDate is never refused for being a moment too old. */
const reachMarginMs = 10 * 60 * 1000;
/** At most this many pages per pull (a runaway answer stops here; the next pull goes on). */
const maxPages = 50;

/** The window a pull reads: from the previous pull's end less the overlap, never beyond the reach. */
export function pullWindow(now: Date, pulledAt: string | null): { start: Date; end: Date } {
  const earliest = now.getTime() - pullReachMs + reachMarginMs;
  const from = pulledAt ? Date.parse(pulledAt) - overlapMs : earliest;
  return { start: new Date(Math.max(earliest, from)), end: now };
}

/** The stores to pull (the scheduled pull's first step). */
export async function pullTargets(deps: Pick<C2bDeps, 'pool'>): Promise<{ storeId: string; environment: Environment }[]> {
  return (await listPullTargets(deps.pool)).map((t) => ({ storeId: t.store_id, environment: t.environment }));
}

/**
 * Registers the shortcode for Pull Transactions (one time; Safaricom approves it for production).
 * The nominated number is a Safaricom phone of the business; the callback URL receives Safaricom's
 * notices about the registration (we only need the queries).
 */
export async function registerPullTransactions(
  deps: Pick<C2bDeps, 'pool' | 'config' | 'logger'>,
  who: { storeId: string; environment: Environment },
  input: { shortcode: string; nominatedNumber: string; callbackUrl: string },
): Promise<{ registered: true; error: null } | { registered: false; error: string }> {
  const body: PullRegisterBody = { ShortCode: input.shortcode, RequestType: 'Pull', NominatedNumber: input.nominatedNumber, CallBackURL: input.callbackUrl };
  let problem: string | null = null;
  try {
    const session = await openMerchantSession(deps, who.storeId, who.environment);
    const answer = await session.post(pullRegisterPath, body);
    const b = answer.json as { ResponseStatus?: unknown; ResponseCode?: unknown } | undefined;
    const code = String(b?.ResponseStatus ?? b?.ResponseCode ?? '');
    if (answer.status !== 200 || (code !== '1000' && code !== '0')) {
      const refusal = classifyDarajaError(answer.status, answer.json ?? answer.text);
      problem = `Daraja refused to register Pull Transactions: ${refusal.errorCode ? `${refusal.errorCode} ` : ''}${refusal.errorMessage}`;
    }
  } catch (err) {
    problem = `Daraja could not be reached to register Pull Transactions (${(err as Error).message}); connect again to retry.`;
  }
  await savePullRegistration(deps.pool, who.storeId, who.environment, { registered: problem === null, error: problem });
  deps.logger?.info({ storeId: who.storeId, environment: who.environment, registered: problem === null }, 'M-Pesa Pull Transactions registration');
  return problem === null ? { registered: true, error: null } : { registered: false, error: problem };
}

/** One store's pull. Idempotent: run twice over the same window, it finds everything recorded. */
export async function pullC2bPayments(deps: C2bDeps, who: { storeId: string; environment: Environment }): Promise<PullSummary> {
  const summary: PullSummary = { ...who, pulled: 0, backfilled: 0, corroborated: 0, disputed: 0, unmatched: 0, problem: null };
  const target = await findPullTarget(deps.pool, who.storeId, who.environment);
  if (!target) return { ...summary, problem: 'not registered for Pull Transactions' };
  const now = (deps.now ?? (() => new Date()))();
  const { start, end } = pullWindow(now, target.pulled_at);
  const session = await openMerchantSession(deps, who.storeId, who.environment);
  let offset = 0;
  for (let page = 0; page < maxPages; page++) {
    const answer = await session.post(pullQueryPath, { ShortCode: target.shortcode, StartDate: pullDate(start), EndDate: pullDate(end), OffSetValue: String(offset) });
    if (answer.status !== 200) {
      const refusal = classifyDarajaError(answer.status, answer.json ?? answer.text);
      summary.problem = `Daraja refused the Pull Transactions query: ${refusal.errorCode ? `${refusal.errorCode} ` : ''}${refusal.errorMessage}`;
      break;
    }
    const parsed = parsePullAnswer(answer.json);
    if (!parsed.ok) {
      summary.problem = `Pull Transactions answered ${parsed.problem}`;
      break;
    }
    for (const record of parsed.records) await processPulled(deps, target, record, summary);
    const seen = parsed.records.length + parsed.malformed.length;
    if (parsed.malformed.length > 0) deps.logger?.warn({ storeId: who.storeId, count: parsed.malformed.length }, 'Pull Transactions records that could not be read were skipped');
    if (seen === 0) break;
    offset += seen;
  }
  // The window is done only when it was read to its end: a refusal reads it again next time.
  if (summary.problem === null) await setPulledAt(deps.pool, who.storeId, who.environment, end);
  deps.logger?.info({ ...summary }, 'M-Pesa Pull Transactions read');
  return summary;
}

async function processPulled(deps: C2bDeps, target: PullTarget, record: PulledRecord, summary: PullSummary): Promise<void> {
  summary.pulled++;
  const amount = wholeShillings(record.amount);
  if (amount === null) return;
  const post = asPost(record, target.shortcode);
  const ref = normalizeAccountRef(record.billreference ?? '');
  const toMatch = { storeId: target.store_id, environment: target.environment, transId: record.transactionId, amount, accountRef: ref, buyGoods: isBuyGoods(record.transactiontype) };
  const { stored, row, pulledBefore } = await storeWithItsLink(deps.pool, toMatch, (db, linkId) => recordPulledC2bPayment(db, {
    store_id: target.store_id,
    environment: target.environment,
    shortcode: target.shortcode,
    trans_id: record.transactionId,
    transaction_type: post.TransactionType ?? null,
    trans_time: post.TransTime ?? null,
    amount,
    bill_ref: record.billreference ?? null,
    account_ref: ref,
    link_id: linkId,
    msisdn: record.msisdn ?? null,
    payer_name: null,
    // The pulled record is Safaricom's own listing: the evidence a waiting confirmation needs.
    state: linkId ? 'matched' : 'unallocated',
    fingerprint: c2bFingerprint(post),
    body: record,
  }));
  if (stored) {
    // The confirmation never arrived: processed as one.
    summary.backfilled++;
    if (row.state === 'matched') await signalLink(deps, row);
    else await unmatched(deps, row, summary);
    return;
  }
  if (pulledBefore) return; // listed by an earlier pull: already processed
  if (!pullAgreesWith(record, row, target.shortcode)) {
    await recordSuspiciousC2bPost(deps.pool, {
      storeId: target.store_id, environment: target.environment, kind: 'pull_mismatch', transId: row.trans_id,
      reason: `The confirmation of TransID ${row.trans_id} (amount ${row.amount}, reference ${row.bill_ref ?? 'none'}) disagrees with Pull Transactions (amount ${record.amount}, reference ${record.billreference ?? 'none'})`,
      body: record,
    });
    if (await settleAwaiting(deps.pool, row.id, 'disputed')) summary.disputed++;
    await markPulled(deps.pool, row.id, record);
    deps.logger?.warn({ storeId: target.store_id, transId: row.trans_id, state: row.state }, 'M-Pesa C2B confirmation contradicted by Pull Transactions');
    return;
  }
  if (row.state === 'awaiting_evidence' && row.link_id) {
    if (await settleAwaiting(deps.pool, row.id, 'matched')) {
      summary.corroborated++;
      await signalLink(deps, { ...row, state: 'matched' });
    }
  } else if (row.state === 'matched' && row.link_id && !target.settles_alone) {
    // Moved to matched by an attempt that stopped before telling the link: tell it now (counted once).
    await signalLink(deps, row);
  } else if (row.state === 'unallocated') {
    await unmatched(deps, row, summary);
  }
  await markPulled(deps.pool, row.id, record);
}

async function unmatched(deps: C2bDeps, row: C2bPaymentRow, summary: PullSummary): Promise<void> {
  await announceUnallocated(deps, row);
  const created = await recordUnmatchedPullFinding(deps.pool, {
    storeId: row.store_id, environment: row.environment, rail: mpesaFacts.id, shortcode: row.shortcode, transId: row.trans_id, amount: row.amount,
  });
  if (created) summary.unmatched++;
}

/** A pulled record in the confirmation's shape (for the fingerprint and the stored type and time). */
function asPost(record: PulledRecord, shortcode: string): C2bPost {
  const time = record.trxDate ? String(record.trxDate).replace(/\D/g, '').slice(0, 14) : null;
  return {
    TransactionType: isBuyGoods(record.transactiontype) ? 'Buy Goods' : 'Pay Bill',
    TransID: record.transactionId,
    TransTime: time,
    TransAmount: record.amount,
    BusinessShortCode: shortcode,
    BillRefNumber: record.billreference ?? '',
    MSISDN: record.msisdn ?? null,
  };
}


/**
 * Where Safaricom may send notices about the Pull registration: acknowledged, and a bounded
 * summary kept (services/mpesa/pull-notices.ts); the queries are all the backfill needs.
 */
export const pullNoticePath = '/v1/callbacks/c2b/pull-notices';
