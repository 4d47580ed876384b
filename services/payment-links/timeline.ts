import { defaultPayloadConverter } from '@temporalio/common';
import type { temporal } from '@temporalio/proto';
import { maskPhone } from '../../domain/phone.js';
import { searchAttributes } from '../../domain/search-attributes.js';
import { amountUnitOf } from '../../rails/methods.js';

/**
 * A payment link's timeline, from two sources merged by time:
 * - the workflow's Temporal history (what the engine did: prompts, STK queries, hints received,
 *   status changes, webhook dispatch), read by an allow-list: only the event kinds and result
 *   fields named here are read, so no activity input (phone numbers, amounts in flight) and
 *   nothing a future activity adds ever reaches a page by accident;
 * - the read model (what was recorded: prompts, callbacks, deposits, payments, the event and
 *   each webhook attempt).
 * Pure: the caller fetches both (services/payment-links/link-detail.ts).
 */
export type TimelineTone = 'ok' | 'bad' | 'info';

export interface TimelineEntry {
  /** ISO time, or null when the record has none (a cancel without its history). */
  at: string | null;
  title: string;
  detail?: string;
  tone: TimelineTone;
  source: 'workflow' | 'records';
  /** Entries that both sources can tell: the workflow's copy wins (`status:CONFIRMED`). */
  dedupeKey?: string;
}

type History = temporal.api.history.v1.IHistory;
type HistoryEvent = temporal.api.history.v1.IHistoryEvent;
type Payload = temporal.api.common.v1.IPayload;

function isoOf(ts: HistoryEvent['eventTime']): string | null {
  if (!ts || ts.seconds === null || ts.seconds === undefined) return null;
  const seconds = typeof ts.seconds === 'number' ? ts.seconds : Number(ts.seconds.toString());
  return new Date(seconds * 1000 + Math.floor((ts.nanos ?? 0) / 1e6)).toISOString();
}

/** A payload as JSON, or undefined when it is not (binary, encrypted, malformed). */
function decode(payload: Payload | null | undefined): unknown {
  if (!payload) return undefined;
  try {
    return defaultPayloadConverter.fromPayload(payload as never);
  } catch {
    return undefined;
  }
}

const field = (value: unknown, name: string): unknown => (value && typeof value === 'object' ? (value as Record<string, unknown>)[name] : undefined);
const text = (value: unknown, max = 160): string | undefined => (typeof value === 'string' && value !== '' ? value.slice(0, max) : undefined);

const signalTitles: Record<string, string> = {
  mobileMoneyCallback: 'M-Pesa callback received by the workflow (a hint: settled by an STK query)',
  paymentSeen: 'Deposit reported on chain (a hint: checked against the recorded deposit)',
  paymentConfirmed: 'Deposit reported at depth (a hint: checked against the recorded deposit)',
  paymentDropped: 'Deposit reported dropped by a reorganisation',
  paymentFailed: 'M-Pesa prompt reported failed (a hint: settled by an STK query)',
};

const updateTitles: Record<string, string> = {
  startMobileMoneyPayment: 'M-Pesa prompt requested',
  cancel: 'Cancel requested',
  simulatePayment: 'Simulated payment requested',
};

const settlementTitles: Record<string, [string, TimelineTone]> = {
  succeeded: ['STK query: paid', 'ok'],
  failed: ['STK query: not paid', 'bad'],
  pending: ['STK query: still open on the phone; asked again later', 'info'],
  unknown_request: ['STK query: M-Pesa does not know the prompt yet; asked again later', 'info'],
  not_ours: ['STK query skipped: the hint named a prompt this link never sent (ignored)', 'bad'],
};

type Step = Omit<TimelineEntry, 'source' | 'at'>;

/** What a finished activity means for the merchant; null for bookkeeping the records show better. */
function activityStep(type: string, result: unknown, failure: string | undefined): Step | null {
  switch (type) {
    case 'sendStkPush':
      return failure
        ? { title: 'M-Pesa prompt could not be sent', detail: failure, tone: 'bad' }
        : { title: 'M-Pesa prompt sent to the phone', detail: text(field(result, 'checkoutRequestId')) && `CheckoutRequestID ${text(field(result, 'checkoutRequestId'))}`, tone: 'info' };
    case 'settleStkPrompt':
    case 'queryStkPush': {
      if (failure) return { title: 'STK query: M-Pesa could not be asked; asked again later', detail: failure, tone: 'bad' };
      const status = text(field(result, 'status')) ?? 'unknown';
      const [title, tone] = settlementTitles[status] ?? [`STK query: ${status}`, 'info'];
      return { title, detail: text(field(result, 'reason')), tone };
    }
    case 'verifyDeposit': {
      if (failure) return { title: 'Deposit check failed', detail: failure, tone: 'bad' };
      const state = text(field(result, 'state'));
      return state
        ? { title: `Deposit checked: ${state} on chain`, tone: state === 'dropped' ? 'bad' : 'info' }
        : { title: 'Deposit hint ignored: no recorded deposit of this link', tone: 'bad' };
    }
    case 'dispatchEvent': {
      if (failure) return { title: 'Webhook dispatch failed', detail: failure, tone: 'bad' };
      if (field(result, 'deferred') === true) return { title: 'Webhook event left to the outbox relay, which had claimed it', tone: 'info' };
      const endpoints = field(result, 'endpoints');
      return { title: 'Webhook event dispatched', detail: typeof endpoints === 'number' ? `${endpoints} endpoint${endpoints === 1 ? '' : 's'} subscribed` : undefined, tone: 'info', dedupeKey: 'event:dispatched' };
    }
    case 'stopWatchingLink':
      return { title: "Stopped watching the link's addresses", tone: 'info' };
    default:
      return failure ? { title: `Engine step ${type} failed`, detail: failure, tone: 'bad' } : null;
  }
}

/** The status a search-attribute upsert set, if it set one. */
function statusOf(e: HistoryEvent): string | undefined {
  const fields = e.upsertWorkflowSearchAttributesEventAttributes?.searchAttributes?.indexedFields;
  const raw = fields?.[searchAttributes.status.name];
  const value = decode(raw);
  return typeof value === 'string' ? value : Array.isArray(value) && typeof value[0] === 'string' ? value[0] : undefined;
}

const statusTones: Record<string, TimelineTone> = { CONFIRMED: 'ok', EXPIRED: 'bad', CANCELLED: 'bad' };

/** The merchant-facing steps of a payment-link workflow's history (one run or several, in order). */
export function workflowEntries(history: History): TimelineEntry[] {
  const scheduled = new Map<string, string>();
  const updates = new Map<string, string>();
  const out: TimelineEntry[] = [];
  const push = (e: HistoryEvent, step: Step | null) => step && out.push({ ...step, at: isoOf(e.eventTime), source: 'workflow' });
  for (const e of history.events ?? []) {
    const id = String(e.eventId ?? '');
    if (e.workflowExecutionStartedEventAttributes) {
      const continued = !!e.workflowExecutionStartedEventAttributes.continuedExecutionRunId;
      push(e, { title: continued ? 'Workflow continued in a new run (history kept short)' : 'Workflow started', tone: 'info' });
    } else if (e.workflowExecutionSignaledEventAttributes) {
      const name = e.workflowExecutionSignaledEventAttributes.signalName ?? '';
      push(e, { title: signalTitles[name] ?? `Signal ${name} received`, tone: 'info' });
    } else if (e.workflowExecutionUpdateAcceptedEventAttributes) {
      const request = e.workflowExecutionUpdateAcceptedEventAttributes.acceptedRequest;
      const name = request?.input?.name ?? '';
      updates.set(e.workflowExecutionUpdateAcceptedEventAttributes.protocolInstanceId ?? id, name);
      const rail = name === 'simulatePayment' ? text(field(decode(request?.input?.args?.payloads?.[0]), 'rail'), 40) : undefined;
      push(e, { title: updateTitles[name] ?? `Update ${name} accepted`, detail: rail && `Rail ${rail}`, tone: 'info' });
    } else if (e.workflowExecutionUpdateCompletedEventAttributes) {
      const a = e.workflowExecutionUpdateCompletedEventAttributes;
      const failure = text(a.outcome?.failure?.message ?? undefined, 300);
      const name = updates.get(a.meta?.updateId ?? '') ?? '';
      if (failure) push(e, { title: `${updateTitles[name] ?? 'Request'}: refused`, detail: failure, tone: 'bad' });
    } else if (e.activityTaskScheduledEventAttributes) {
      scheduled.set(id, e.activityTaskScheduledEventAttributes.activityType?.name ?? '');
    } else if (e.activityTaskCompletedEventAttributes) {
      const type = scheduled.get(String(e.activityTaskCompletedEventAttributes.scheduledEventId ?? '')) ?? '';
      push(e, activityStep(type, decode(e.activityTaskCompletedEventAttributes.result?.payloads?.[0]), undefined));
    } else if (e.activityTaskFailedEventAttributes || e.activityTaskTimedOutEventAttributes) {
      const a = e.activityTaskFailedEventAttributes ?? e.activityTaskTimedOutEventAttributes!;
      const type = scheduled.get(String(a.scheduledEventId ?? '')) ?? '';
      push(e, activityStep(type, undefined, text(a.failure?.message ?? undefined, 300) ?? 'timed out'));
    } else if (e.upsertWorkflowSearchAttributesEventAttributes) {
      const status = statusOf(e);
      if (status) push(e, { title: `Status ${status}`, tone: statusTones[status] ?? 'info', dedupeKey: `status:${status}` });
    } else if (e.workflowExecutionCompletedEventAttributes) {
      push(e, { title: 'Workflow finished: the link is no longer watched', tone: 'info' });
    } else if (e.workflowExecutionFailedEventAttributes || e.workflowExecutionTerminatedEventAttributes || e.workflowExecutionTimedOutEventAttributes) {
      push(e, { title: 'Workflow ended abnormally (failed, terminated or timed out): see it in Temporal', tone: 'bad' });
    }
  }
  return out;
}

/** The read model's facts about one link, as the detail service loads them (no secrets selected). */
export interface LinkRecords {
  link: { createdAt: string; status: string; expiresAt: string; confirmedAt: string | null; confirmedRail: string | null };
  prompts: { attempt: string; state: string; phone: string; amountKes: number; checkoutRequestId: string | null; failureMessage: string | null; createdAt: string }[];
  callbacks: { checkoutRequestId: string; resultCode: string; resultDesc: string; receipt: string | null; suspiciousReason: string | null; receivedAt: string }[];
  deposits: { rail: string; txHash: string; amount: string; blockNumber: string; state: string; createdAt: string; updatedAt: string }[];
  payments: { rail: string; externalId: string | null; amount: string | null; state: string; disposition: string | null; failureReason: string | null; createdAt: string; updatedAt: string; simulated: boolean }[];
  /** The link's event; `dispatchedAt`: when its fan-out (the outbox relay's, or an older link's own dispatch) finished. */
  event: { id: string; type: string; createdAt: string; dispatchedAt?: string | null } | null;
  deliveries: { attempt: number; endpointUrl: string; status: string; responseStatus: number | null; latencyMs: number | null; error: string | null; trigger: string; createdAt: string }[];
}


const short = (hash: string) => (hash.length > 20 ? `${hash.slice(0, 10)}…${hash.slice(-6)}` : hash);

/** The read model's entries. */
export function recordEntries(r: LinkRecords): TimelineEntry[] {
  const out: TimelineEntry[] = [];
  const add = (at: string | null, step: Step) => out.push({ ...step, at, source: 'records' });
  add(r.link.createdAt, { title: 'Link created', tone: 'info' });
  for (const p of r.prompts) {
    const detail = [`${p.amountKes} KES to ${maskPhone(p.phone)}`, p.checkoutRequestId && `CheckoutRequestID ${p.checkoutRequestId}`, p.failureMessage].filter(Boolean).join(' · ');
    if (p.state === 'rejected') add(p.createdAt, { title: 'M-Pesa refused the prompt', detail, tone: 'bad' });
    else if (p.state === 'unknown') add(p.createdAt, { title: 'M-Pesa prompt: no clear answer from the operator (never resent)', detail, tone: 'bad' });
    else add(p.createdAt, { title: p.state === 'sending' ? 'M-Pesa prompt being sent' : 'M-Pesa prompt recorded', detail, tone: 'info' });
  }
  for (const c of r.callbacks) {
    const detail = [`${c.resultDesc} (code ${c.resultCode})`, c.receipt && `receipt ${c.receipt}`, c.suspiciousReason && `not believed: ${c.suspiciousReason}`].filter(Boolean).join(' · ');
    add(c.receivedAt, { title: 'M-Pesa callback stored', detail, tone: c.suspiciousReason ? 'bad' : 'info' });
  }
  for (const d of r.deposits) {
    const detail = `${d.amount} USDT · ${d.rail} · tx ${short(d.txHash)} · block ${d.blockNumber}`;
    add(d.createdAt, { title: 'Deposit seen on chain', detail, tone: 'info' });
    if (d.state === 'confirmed') add(d.updatedAt, { title: 'Deposit confirmations reached', detail, tone: 'ok' });
    if (d.state === 'dropped') add(d.updatedAt, { title: 'Deposit dropped by a chain reorganisation', detail, tone: 'bad' });
  }
  for (const p of r.payments) {
    const what = [p.amount !== null ? `${p.amount} ${amountUnitOf(p.rail)}` : null, p.rail, p.externalId && `ref ${short(p.externalId)}`, p.disposition, p.failureReason]
      .filter(Boolean).join(' · ');
    if (p.state === 'confirmed') add(p.updatedAt, { title: p.simulated ? 'Simulated payment counted' : 'Payment counted', detail: what, tone: p.disposition === null || ['payment', 'late', 'overpaid'].includes(p.disposition) ? 'ok' : 'bad' });
    else if (p.state === 'failed' || p.state === 'dropped') add(p.updatedAt, { title: `Payment ${p.state}`, detail: what, tone: 'bad' });
  }
  const { status, confirmedAt, confirmedRail, expiresAt } = r.link;
  if (confirmedAt) add(confirmedAt, { title: 'Status CONFIRMED', detail: confirmedRail ?? undefined, tone: 'ok', dedupeKey: 'status:CONFIRMED' });
  if (status === 'EXPIRED') add(expiresAt, { title: 'Status EXPIRED', tone: 'bad', dedupeKey: 'status:EXPIRED' });
  if (status === 'CANCELLED') add(null, { title: 'Status CANCELLED', detail: 'The time is in the workflow history.', tone: 'bad', dedupeKey: 'status:CANCELLED' });
  if (r.event) add(r.event.createdAt, { title: `Webhook event ${r.event.type} written`, detail: r.event.id, tone: 'info' });
  // The outbox relay's fan-out ran to its end (the workflow's own dispatch step, in links from before it, is in the history too).
  if (r.event?.dispatchedAt) add(r.event.dispatchedAt, { title: 'Webhook event dispatched', detail: 'every subscribed endpoint got its first attempt or a retry schedule', tone: 'info', dedupeKey: 'event:dispatched' });
  for (const d of r.deliveries) {
    const result = d.status === 'succeeded' ? `succeeded${d.responseStatus ? ` (HTTP ${d.responseStatus})` : ''}` : `failed${d.responseStatus ? ` (HTTP ${d.responseStatus})` : ''}`;
    const detail = [d.endpointUrl, d.latencyMs !== null ? `${d.latencyMs} ms` : null, d.trigger === 'manual' ? 'manual retry' : null, d.error].filter(Boolean).join(' · ');
    add(d.createdAt, { title: `Webhook attempt ${d.attempt}: ${result}`, detail, tone: d.status === 'succeeded' ? 'ok' : 'bad' });
  }
  return out;
}

/**
 * Both sources in one list, oldest first (entries without a time last). An entry both can tell
 * (a status change) is kept once, from the workflow, whose time is exact. Without a history
 * (`workflow` null) the records stand alone.
 */
export function mergeTimeline(records: TimelineEntry[], workflow: TimelineEntry[] | null): TimelineEntry[] {
  const told = new Set((workflow ?? []).flatMap((e) => (e.dedupeKey ? [e.dedupeKey] : [])));
  const all = [...records.filter((e) => !e.dedupeKey || !told.has(e.dedupeKey)), ...(workflow ?? [])];
  const at = (e: TimelineEntry) => (e.at === null ? Infinity : Date.parse(e.at));
  return all.map((e, i) => ({ e, i })).sort((a, b) => at(a.e) - at(b.e) || a.i - b.i).map(({ e }) => e);
}
