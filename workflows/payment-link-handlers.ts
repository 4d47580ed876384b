import { ApplicationFailure, setHandler, uuid4 } from '@temporalio/workflow';
import { amountDueMinor } from '../domain/link-accounting.js';
import { maxPromptsPerLink } from '../domain/mpesa/prompt-limits.js';
import type { RailId } from '../domain/rails.js';
import type { LinkStatus } from '../domain/states.js';
import {
  cancelLink,
  linkState,
  mobileMoneyCallback,
  paymentConfirmed,
  paymentDropped,
  paymentFailed,
  paymentSeen,
  simulatePayment,
  startMobileMoneyPayment,
} from '../domain/workflow-contract.js';
import { mobileMoney } from './mobile-money-prompts.js';
import { onConfirmed } from './payment-link-payments.js';
import { db, type LinkRun } from './payment-link-run.js';

/**
 * What the outside can tell a link's workflow. Signals only go into the inbox, which the main
 * loop drains one at a time; updates answer their caller, each validated first and run under the
 * lock; the query reads the state. Registered in this order, before the first await.
 */
export function registerHandlers(run: LinkRun): void {
  setHandler(paymentSeen, (report) => void run.inbox.push({ kind: 'seen', report }));
  setHandler(paymentConfirmed, (report) => void run.inbox.push({ kind: 'confirmed', report }));
  setHandler(paymentDropped, (hint) => void run.inbox.push({ kind: 'dropped', rail: hint?.rail, key: hint?.key }));
  setHandler(paymentFailed, (hint) => void run.inbox.push({ kind: 'failed', rail: hint?.rail, key: hint?.key, reason: hint?.reason }));
  setHandler(mobileMoneyCallback, (hint) => void run.inbox.push({ kind: 'callback', key: hint?.key }));
  setHandler(linkState, () => ({
    status: run.status,
    receivedMinorByRail: {},
    payments: [...run.payments.entries()].map(([key, p]) => ({ key, rail: p.rail, state: p.state, disposition: p.disposition })),
  }));
  setHandler(startMobileMoneyPayment, ({ phoneNumber }) => run.withLock(() => sendPrompt(run, phoneNumber)), {
    validator: (_request) => {
      requireOpen(run, run.promptRail);
      requirePromptAllowed(run);
    },
  });
  setHandler(cancelLink, () => run.withLock(() => cancel(run)), { validator: () => requireCancellable(run) });
  setHandler(simulatePayment, ({ rail }) => run.withLock(() => simulate(run, rail)), {
    validator: ({ rail }) => {
      requireTestEnvironment(run);
      requireOpen(run, rail);
    },
  });
}

const rejected = (type: 'invalid_state' | 'rail_not_enabled' | 'prompt_limit', message: string) =>
  ApplicationFailure.create({ type, message: `${type}: ${message}`, nonRetryable: true });

function requireOpen(run: LinkRun, rail: RailId): void {
  if (!run.input.enabledRails.includes(rail)) throw rejected('rail_not_enabled', `${rail} is not enabled on this payment link.`);
  if (run.status !== 'PENDING') throw rejected('invalid_state', `The payment link is ${run.status}; it must be PENDING.`);
  if (Date.now() >= run.input.expiresAtMs) throw rejected('invalid_state', 'The payment link has expired.');
}

function requirePromptAllowed(run: LinkRun): void {
  if (run.prompts >= maxPromptsPerLink) {
    throw rejected('prompt_limit', `This payment link has had ${maxPromptsPerLink} M-Pesa prompts, the most one link takes; create a new link to try again.`);
  }
}

function requireCancellable(run: LinkRun): void {
  if (run.status !== 'PENDING') throw rejected('invalid_state', `The payment link is ${run.status}; only a PENDING link can be cancelled.`);
}

function requireTestEnvironment(run: LinkRun): void {
  if (run.input.environment !== 'test') throw rejected('invalid_state', 'Simulated payments exist only in the test environment.');
}

/** The M-Pesa prompt: sent to the phone, recorded as initiated, PENDING → PROCESSING; settled later by the prompt book. */
async function sendPrompt(run: LinkRun, phoneNumber: string): Promise<{ ok: true; checkoutRequestId: string }> {
  requireOpen(run, run.promptRail);
  requirePromptAllowed(run);
  run.prompts += 1;
  const { input } = run;
  const sent = await mobileMoney.sendStkPush({
    linkId: input.linkId,
    storeId: input.storeId,
    environment: input.environment,
    phoneNumber,
    amountKes: input.mobileMoneyAmount ?? 0,
    accountReference: (input.merchantRef ?? input.linkId).slice(0, 12),
    description: 'Payment',
    attempt: `${input.linkId}:prompt:${run.prompts}`,
  });
  const key = sent.checkoutRequestId;
  run.payments.set(key, { rail: run.promptRail, state: 'initiated', disposition: null, micro: 0n });
  run.promptBook.add(key, phoneNumber);
  run.promptAdded = true;
  await db.recordPayment({
    linkId: input.linkId,
    report: { rail: run.promptRail, key, externalId: key, payer: phoneNumber, amountMinor: String(input.mobileMoneyAmount ?? 0), decimals: 0 },
    state: 'initiated',
    disposition: null,
  });
  if (run.status === 'PENDING') await run.moveTo('prompt_sent');
  return { ok: true as const, checkoutRequestId: key };
}

/** PENDING → CANCELLED; checked again under the lock (the validator ran before another handler may have moved it). */
async function cancel(run: LinkRun): Promise<{ status: LinkStatus }> {
  requireCancellable(run);
  await run.moveTo('cancelled');
  return { status: run.status };
}

/** A simulated payment of the full amount, confirmed like a real one (test environment only). */
async function simulate(run: LinkRun, rail: RailId): Promise<{ status: LinkStatus }> {
  // The validator refuses live links already; a handler never trusts that it ran.
  requireTestEnvironment(run);
  requireOpen(run, rail);
  const prompt = run.isPrompted(rail);
  const id = uuid4().replace(/-/g, '');
  await onConfirmed(run, {
    rail,
    key: `sim_${id}`,
    externalId: prompt ? `SIM${id.slice(0, 7).toUpperCase()}` : `0x${id}${id}`,
    payer: prompt ? '254700000000' : null,
    amountMinor: String(amountDueMinor(run.terms, run.currencyOf(rail), run.decimalsOf(rail))),
    decimals: run.decimalsOf(rail),
    simulated: true,
  });
  return { status: run.status };
}
