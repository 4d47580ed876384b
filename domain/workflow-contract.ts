import { defineQuery, defineSignal, defineUpdate } from '@temporalio/workflow';
import type { Cursor } from './chain-cursor.js';
import type { RailId, UsdtRail } from './rails.js';
import type { LinkStatus } from './states.js';

/**
 * The vocabulary between the workflows and everything that talks to them: workflow ids, inputs,
 * and the messages a workflow accepts. Workflow code defines its handlers with these; the rest of
 * the system reaches Temporal only through temporal-client/, which uses them.
 *
 * The messages a payment-link workflow accepts. Outside events (an operator callback, a deposit
 * seen on chain, a confirmation, a reorg) are signals; actions that must answer the caller
 * (the M-Pesa prompt, cancel, a simulated payment) are updates with validators; state is a query.
 */
export const paymentLinkWorkflowId = (linkId: string): string => `payment-link/${linkId}`;
export const invoiceWorkflowId = (invoiceId: string): string => `invoice/${invoiceId}`;
/** Payment links and invoices run the same workflow code under their own ids. */
export const requestWorkflowId = (kind: 'payment_link' | 'invoice', id: string): string =>
  kind === 'invoice' ? invoiceWorkflowId(id) : paymentLinkWorkflowId(id);

export interface PaymentLinkInput {
  linkId: string;
  storeId: string;
  environment: 'test' | 'live';
  enabledRails: RailId[];
  /** USDT amount due in micro-USDT (6 decimals), as a decimal integer string. */
  usdtAmountMicro: string;
  /** Whole KES for MOBILE_MONEY, or null. */
  mobileMoneyAmount: number | null;
  merchantRef: string | null;
  expiresAtMs: number;
  /** How long after expiry (or confirmation) payments are still recorded. */
  lateWatchMinutes: number;
  /** Basis points of the amount a payment may fall short and still confirm. */
  underpaymentToleranceBps: number;
  /** Where `dispatchEvent` runs (the deployment's webhooks task queue). */
  webhookTaskQueue: string;
  /** First STK query of a prompt whose callback has not come; later ones back off from it. */
  promptFirstCheckMs?: number;
  /** History events after which the run continues as new (default 10,000; tests set it low). */
  historyEventLimit?: number;
  /** How often an open link reads its recorded evidence without being woken (tests shorten it; default 10 minutes). */
  evidencePullMs?: number;
  /**
   * What the workflow needs of each enabled rail (rails/registry.ts `linkRailTerms`): a rail
   * registered at boot is unknown to the workflow's sandbox, which evaluates the registry anew.
   * Absent in histories recorded before it: the workflow then reads the built-in registry.
   */
  railTerms?: Record<string, LinkRailTerms>;
  /** The state a previous run handed over when it continued as new. */
  carried?: CarriedLinkState;
}

/** What the link workflow needs of one rail: its amounts' decimals, the currency they count in, whether it is paid by a prompt. */
export interface LinkRailTerms {
  decimals: number;
  currency: 'KES' | 'USDT';
  prompted: boolean;
}

/** What a payment-link run carries into the next when it continues as new (money as strings). */
export interface CarriedLinkState {
  status: LinkStatus;
  terminalAtMs: number;
  prompts: number;
  payments: [string, { rail: RailId; state: string; disposition: string | null; micro: string; unanswered?: boolean }][];
  promptChecks: [string, { phone: string; checks: number; errors: number; dueAtMs: number }][];
}

import type { PaymentReport } from './payment-report.js';

export type { PaymentReport };

/*
 * Signals are hints, never proof: anyone who reaches the Temporal frontend or UI can send one.
 * The workflow takes only the rail and key from them and acts on what an activity reads from
 * recorded evidence (the deposit row the chain watcher wrote; the operator's STK query).
 */
/** A deposit included in a block but not yet at depth: PENDING → PROCESSING. */
export const paymentSeen = defineSignal<[PaymentReport]>('paymentSeen');
/** A deposit at depth, or a successful operator callback. */
export const paymentConfirmed = defineSignal<[PaymentReport]>('paymentConfirmed');
/** A seen deposit dropped by a reorg. */
export const paymentDropped = defineSignal<[{ rail: RailId; key: string }]>('paymentDropped');
/** The operator reported the prompt failed (cancelled, wrong PIN, timeout, insufficient funds). */
export const paymentFailed = defineSignal<[{ rail: RailId; key: string; reason: string }]>('paymentFailed');

/** Daraja called back about a prompt: settle it with an STK query. Carries the CheckoutRequestID only. */
export const mobileMoneyCallback = defineSignal<[{ key: string }]>('mobileMoneyCallback');

export interface MobileMoneyPromptRequest {
  phoneNumber: string;
}
export interface MobileMoneyPromptResult {
  ok: true;
  checkoutRequestId: string;
}
export const startMobileMoneyPayment = defineUpdate<MobileMoneyPromptResult, [MobileMoneyPromptRequest]>('startMobileMoneyPayment');
export const cancelLink = defineUpdate<{ status: LinkStatus }, []>('cancel');
export const simulatePayment = defineUpdate<{ status: LinkStatus }, [{ rail: RailId }]>('simulatePayment');

export interface PaymentLinkState {
  status: LinkStatus;
  receivedMinorByRail: Partial<Record<RailId, string>>;
  payments: { key: string; rail: RailId; state: string; disposition: string | null }[];
}
export const linkState = defineQuery<PaymentLinkState>('state');

export interface ChainWatcherInput {
  rail: UsdtRail;
  environment: 'test' | 'live';
  cursor: Cursor | null;
  pollMs: number;
  /** Ticks before continue-as-new (default 500; tests set it low). */
  ticksPerRun?: number;
}

/** `chain-watcher/<rail>/<env>`; with TASK_QUEUE_PREFIX set, deployments sharing a namespace get their own. */
export const chainWatcherWorkflowId = (rail: string, env: string, prefix = ''): string =>
  prefix ? `chain-watcher/${prefix}${rail}/${env}` : `chain-watcher/${rail}/${env}`;

/** One event to one endpoint: the id names the pair, so a repeated dispatch starts nothing new. */
export const deliveryWorkflowId = (eventId: string, endpointId: string): string => `webhook-delivery/${eventId}/${endpointId}`;

/** The outbox sweeper: one per deployment (task-queue prefix). */
export const sweeperWorkflowId = (prefix: string): string => (prefix ? `webhook-outbox-sweeper/${prefix}` : 'webhook-outbox-sweeper');

/** The independent reconciler: one per deployment (task-queue prefix), docs/reconciliation.md. */
export const reconcilerWorkflowId = (prefix: string): string => (prefix ? `reconciler/${prefix}` : 'reconciler');

/** The scheduled M-Pesa pull (workflows/mpesa-pull.ts). */
export interface MpesaPullInput {
  /** The pause between the end of one run and the start of the next (MPESA_PULL_EVERY_MINUTES). */
  everyMs: number;
  /** Runs before continue-as-new (default 100; tests set it low). */
  runsPerRun?: number;
}
export const mpesaPullWorkflowId = (prefix: string): string => (prefix ? `mpesa-pull/${prefix}` : 'mpesa-pull');

export interface ReconcilerInput {
  /** The pause between the end of one run and the start of the next (RECONCILE_EVERY_MINUTES). */
  everyMs: number;
  /** Runs before continue-as-new (default 100; tests set it low). */
  runsPerRun?: number;
  /** Addresses per page (default 500; tests set it low). */
  pageSize?: number;
}

/** A webhook delivery run: one event to one endpoint (or, with `manualDeliveryId`, one manual attempt). */
export interface WebhookDeliveryInput {
  eventId: string;
  endpointId: string;
  /** WEBHOOK_RETRY_SCALE at dispatch time; part of the input so replays see the same schedule. */
  delayScale: number;
  /**
   * The log id of the first attempt, shared with the dispatch that may have made it inline
   * (activities/webhooks/dispatch.ts): if it did, the workflow's first attempt finds its log row
   * and continues the schedule from there without sending. Absent in older histories.
   */
  firstDeliveryId?: string;
  manualDeliveryId?: string;
}

export interface WebhookDeliveryResult {
  outcome: 'delivered' | 'delivered_manually' | 'endpoint_gone' | 'endpoint_unavailable' | 'failed' | 'exhausted';
  attempts: number;
  lastDeliveryId: string | null;
  endpointDisabled: boolean;
}

/** The workflow types the worker registers (workflows/index.ts exports them under these names). */
export const workflowTypes = {
  paymentLink: 'paymentLink',
  invoice: 'invoice',
  chainWatcher: 'chainWatcher',
  webhookDelivery: 'webhookDelivery',
  webhookOutboxSweeper: 'webhookOutboxSweeper',
  reconciler: 'reconciler',
  mpesaPull: 'mpesaPull',
  systemCheck: 'systemCheck',
} as const;
