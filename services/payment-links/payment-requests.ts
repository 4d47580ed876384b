import { UniqueIntegrityConstraintViolationError } from 'slonik';
import { context } from '@opentelemetry/api';
import type { DatabasePool } from 'slonik';
import { allocateLinkAddresses, type LinkAddressFamily } from '../../db/link-address-repo.js';
import { findLinkById, insertLink, markWorkflowsStarted, unstartedRequests, type LinkRow } from '../../db/payment-link-repo.js';
import { findStorePolicy, type CreationContext, type StorePolicy, type WalletKeys } from '../../db/store-repo.js';
import type { StoreConnections } from '../../domain/rails.js';
import { AppError } from '../../domain/errors.js';
import { newId } from '../../domain/ids.js';
import { linkBranch } from '../../domain/hd/derive.js';
import { deriveAddress } from '../../rails/chain/derive-address.js';
import { formatUsdt, parseUsdt } from '../../domain/money.js';
import { type RailId, type RailRequirement } from '../../domain/rails.js';
import { availableRails, linkRailTerms, railFacts as railSpecs } from '../../rails/registry.js';
import type { PaymentLinkInput } from '../../domain/workflow-contract.js';
import { queueOf, startPaymentRequest, targetOf } from '../../temporal-client/index.js';
import type { Rate } from '../rates/rate-service.js';
import type { ServiceDeps } from '../deps.js';
import type { StoreScope } from '../scope.js';
import { isSimulatedOnly, railEndpoint } from '../../rails/settings.js';
import { ensureChainWatchers } from '../chains/watchers.js';
import { handoffFor } from './start-handoff.js';
import { isScanned, methodOf, paidByPrompt } from '../../rails/methods.js';
import type { PaymentMethod } from '../../rails/payment-method.js';

/**
 * What payment links and invoices share: rail availability, address allocation on the link
 * branch, the read-model row and the workflow that owns it.
 */
const howToConnect: Record<RailRequirement, string> = {
  mobile_money: 'connect an M-Pesa paybill or till (POST /v1/merchant/clients/:clientId/mobile-money/connect)',
  tron_xpub: 'register a TRON account xpub (PUT /v1/merchant/clients/:clientId/wallets/tron)',
  evm_xpub: 'register an EVM account xpub (PUT /v1/merchant/clients/:clientId/wallets/evm)',
  solana_wallet: 'connect a Solana wallet (PUT /v1/merchant/clients/:clientId/wallets/solana)',
};

/** Refuses a rail the store has not connected in the environment (`connections`: its creation context's). */
export function assertRailsAvailable(auth: StoreScope, wanted: readonly RailId[], param: string, connections: StoreConnections): void {
  const available = availableRails(connections);
  for (const rail of wanted) {
    if (!available.includes(rail)) {
      throw new AppError('rail_not_available', `${rail} is not available for this store in ${auth.environment}: ${howToConnect[railSpecs[rail].requires]}.`, param);
    }
  }
}


/**
 * Each key's next link-branch address that no link or invoice was ever given (the sequence is the
 * key's, shared by every store and environment holding it: db/link-address-repo.ts), by family.
 */
async function linkAddresses(db: DatabasePool, slots: ReadonlyArray<{ method: PaymentMethod; slot: LinkAddressFamily }>, keys: WalletKeys, ownerId: string) {
  const requests = slots.map(({ method, slot }) => {
    const xpub = keys[slot]!;
    return { family: slot, publicKey: xpub, derive: (index: number) => deriveAddress(xpub, slot, linkBranch, index), ledgerKey: method.ledgerKey };
  });
  const taken = await allocateLinkAddresses(db, ownerId, requests);
  return new Map(requests.map((r, i) => [r.family, taken[i]!] as const));
}

export interface PaymentRequestSpec {
  kind: 'payment_link' | 'invoice';
  id: string;
  rails: RailId[];
  usdtMicro: bigint;
  kes: number | null;
  rate: Rate | null;
  description: string | null;
  merchantRef: string | null;
  metadata: Record<string, unknown> | null;
  redirectUrl: string | null;
  expiresInMinutes: number;
  /** The creating request's correlation id (RequestIds.correlationId); none, a new one. */
  correlationId?: string;
}

/**
 * Takes addresses from the link branch, writes the read model and hands the workflow's start off
 * to run after the answer. The row is the request, marked as not started until its workflow runs:
 * when Temporal cannot be reached, or the process dies first, the workers start it as soon as
 * Temporal answers (startPendingRequests).
 */
export async function openPaymentRequest(deps: ServiceDeps, auth: StoreScope, spec: PaymentRequestSpec, store: CreationContext): Promise<LinkRow> {
  const { policy, keys } = store;
  // How each family of the link receives (rails/<family>/method.ts): an address derived from its
  // xpub, one per family (every EVM rail of a link shares its EVM address); or the store's wallet
  // and a reference of the link.
  const methods = [...new Set(spec.rails.map(methodOf))];
  const referenceRail = spec.rails.find((r) => methodOf(r).receives === 'reference');
  const reference = referenceRail === undefined ? undefined : methodOf(referenceRail);
  const expiresAtMs = Date.now() + spec.expiresInMinutes * 60_000;
  for (const rail of spec.rails) {
    if (!isScanned(rail) || railEndpoint(deps.config.rails, rail, auth.environment).usdtContract) continue;
    // A test link may offer a rail with no test token: it is simulated only (simulate-payment pays
    // it, no watcher reads it, the checkout says so). Anywhere else, without a token contract (or
    // mint) the watcher cannot recognise the payment: refuse rather than lose it. An invoice has
    // no simulate-payment and its safe shape no room to say "simulated only", so it is refused too.
    if (spec.kind === 'payment_link' && isSimulatedOnly(deps.config.rails, rail, auth.environment)) continue;
    throw new AppError('rail_not_available', `${rail} has no USDT contract configured for ${auth.environment}; the operator must set USDT_CONTRACT_${rail}_${auth.environment.toUpperCase()}.`, spec.kind === 'invoice' ? 'network' : 'enabledRails');
  }
  // Null for a simulated-only Solana rail: its link has no Solana Pay URL (no mint to name).
  const solanaMint = referenceRail && isScanned(referenceRail) ? railEndpoint(deps.config.rails, referenceRail, auth.environment).usdtContract ?? null : null;

  // Addresses first, each statement committing on its own (no lock held across round trips, no
  // derivation inside one), then the link and its watched addresses in one short transaction.
  const derivedSlots = methods.flatMap((m) => (m.receives === 'derived_address' && m.walletKey ? [{ method: m, slot: m.walletKey.slot as LinkAddressFamily }] : []));
  const derived = await linkAddresses(deps.pool, derivedSlots, keys, spec.id);
  const shortcode = spec.rails.some(paidByPrompt) ? store.shortcode : null;
  // A reference a payer may type (M-Pesa's paybill account number), drawn again on the rare collision.
  const payerReferenceOf = methods.find((m) => m.newPayerReference)?.newPayerReference;
  // One statement: the link and its watched addresses land together or not at all.
  const row = await insertWithPayerReference(payerReferenceOf, (mobileMoneyAccountRef) => insertLink(deps.pool, {
    id: spec.id,
    kind: spec.kind,
    storeId: auth.storeId,
    environment: auth.environment,
    usdtAmount: formatUsdt(spec.usdtMicro),
    mobileMoneyAmount: spec.kes,
    kesPerUsdt: spec.rate?.kesPerUsdt ?? null,
    rateSource: spec.rate?.source ?? null,
    enabledRails: spec.rails,
    addressIndex: null,
    tronAddress: derived.get('tron')?.address ?? null,
    evmAddress: derived.get('evm')?.address ?? null,
    solanaAddress: reference?.walletKey ? keys[reference.walletKey.slot] : null,
    solanaReference: reference?.newReference?.() ?? null,
    solanaMint,
    mobileMoneyShortcode: shortcode ?? null,
    mobileMoneyAccountRef,
    description: spec.description,
    merchantRef: spec.merchantRef,
    metadata: spec.metadata,
    redirectUrl: spec.redirectUrl,
    expiresAt: new Date(expiresAtMs).toISOString(),
    watchUntil: new Date(expiresAtMs + policy.lateWatchMinutes * 60_000).toISOString(),
    correlationId: spec.correlationId ?? newId('request'),
  }));
  // The answer does not wait for Temporal: the start runs after it (start-handoff.ts), and
  // whatever the hand-off does not start, the workers do. It runs in the creating request's
  // trace context, so the workflow joins that request's trace (docs/tracing.md).
  handoffFor(deps).offer(row.id, context.bind(context.active(), () => startWorkflowOf(deps, row, policy)));
  // Counted once per rail the link offers: "links offering TRON created".
  for (const rail of spec.rails) deps.metrics?.link('created', rail, auth.environment);
  return row;
}

/**
 * A request whose row a crashed attempt of the same Idempotency-Key already wrote (`id` came
 * from `ids.idFor`): its workflow is started if it was not (a no-op if it was), and the row is
 * what the first attempt would have answered with. Null when there is no such row.
 */
export async function resumePaymentRequest(deps: ServiceDeps, auth: StoreScope, id: string): Promise<LinkRow | null> {
  const row = await findLinkById(deps.pool, id);
  if (!row || row.store_id !== auth.storeId || row.environment !== auth.environment) return null;
  if (!row.workflow_started) await startRequestWorkflow(deps, row);
  return row;
}

/**
 * Before a message to a request's workflow (a prompt, a cancel, a simulated payment): starts the
 * workflow if the request was made while Temporal could not be reached and the workers have not
 * started it yet. A 503 while Temporal still cannot be reached.
 */
export async function ensureRequestStarted(deps: StarterDeps, row: LinkRow): Promise<void> {
  if (row.workflow_started) return;
  if (!(await startRequestWorkflow(deps, row))) {
    throw new AppError('upstream_unavailable', 'The payment engine cannot be reached right now; the payment link is safe. Retry shortly.', undefined, { 'Retry-After': '5' });
  }
}

/** Requests this old without a workflow are the workers' to start (the creating process's hand-off tries first). */
export const startAfterSeconds = 3;

/** Starts the workers' starter keeps in flight: a backlog left by an outage drains at Temporal's pace, not one round trip at a time. */
const sweepConcurrency = 16;

/**
 * The workers' half of creation: starts the workflows of requests that have none (made while
 * Temporal was away, or whose creating process died before its hand-off ran), oldest first, a
 * batch at a time, stopping at the first start Temporal refuses. Safe to run in every worker at
 * once: a workflow id starts once (REJECT_DUPLICATE), and an already started one counts as started.
 */
export async function startPendingRequests(deps: StarterDeps, batch = 100): Promise<{ started: number; failed: number }> {
  const rows = await unstartedRequests(deps.pool, startAfterSeconds, batch);
  let started = 0;
  let failed = 0;
  for (let i = 0; i < rows.length && failed === 0; i += sweepConcurrency) {
    for (const ok of await Promise.all(rows.slice(i, i + sweepConcurrency).map((row) => startRequestWorkflow(deps, row)))) {
      if (ok) started++;
      else failed++;
    }
  }
  return { started, failed };
}

export type StarterDeps = Pick<ServiceDeps, 'pool' | 'temporal' | 'config'> & { logger?: Pick<NonNullable<ServiceDeps['logger']>, 'warn' | 'info'> };

/** How long a start may take before it is left to the workers (a start that lands later is found started). */
const startDeadlineMs = 2_000;

/**
 * Starts the workflow that owns a request, with its input taken from the row, and records that it
 * runs: the first attempt, a retry after a crash and the workers' starter start the same workflow,
 * and a workflow that already exists under the id counts as started. False when Temporal could
 * not start it; the row stays marked as not started, and nothing is lost.
 */
async function startRequestWorkflow(deps: StarterDeps, row: LinkRow, knownPolicy?: StorePolicy): Promise<boolean> {
  if (!(await startWorkflowOf(deps, row, knownPolicy))) return false;
  await markWorkflowsStarted(deps.pool, [row.id]);
  return true;
}

/** The start itself, without recording it (the hand-off records its starts in batches). */
async function startWorkflowOf(deps: StarterDeps, row: LinkRow, knownPolicy?: StorePolicy): Promise<boolean> {
  const auth = { storeId: row.store_id, environment: row.environment };
  const policy = knownPolicy ?? (await findStorePolicy(deps.pool, auth.storeId, auth.environment));
  const rails = row.enabled_rails as RailId[];
  const workflowInput: PaymentLinkInput = {
    linkId: row.id,
    storeId: auth.storeId,
    environment: auth.environment,
    enabledRails: rails,
    // What the workflow needs of each rail, which its sandbox cannot read for a rail registered at boot.
    railTerms: Object.fromEntries(rails.flatMap((rail) => {
      const terms = linkRailTerms(rail);
      return terms ? [[rail, terms]] : [];
    })),
    usdtAmountMicro: String(parseUsdt(row.usdt_amount)),
    mobileMoneyAmount: row.mobile_money_amount,
    merchantRef: row.merchant_ref,
    expiresAtMs: Date.parse(row.expires_at),
    lateWatchMinutes: policy.lateWatchMinutes,
    underpaymentToleranceBps: policy.underpaymentToleranceBps,
    webhookTaskQueue: queueOf(targetOf(deps), 'webhooks'),
    promptFirstCheckMs: deps.config.mpesaQueryAfterSeconds * 1000,
    evidencePullMs: deps.config.evidencePullSeconds * 1000,
    historyEventLimit: deps.config.linkHistoryEventLimit,
  };
  try {
    // A Temporal that cannot be reached must not hold the request up: the workers start it later.
    await deps.temporal.withDeadline(Date.now() + startDeadlineMs, async () => {
      await ensureChainWatchers(deps.temporal, deps.config, rails, auth.environment);
      // Already started (an attempt that died after starting it) counts as started.
      await startPaymentRequest(targetOf(deps), { kind: row.kind, merchantRef: row.merchant_ref, correlationId: row.correlation_id }, workflowInput);
    });
  } catch (err) {
    deps.logger?.warn({ err, id: row.id }, 'could not start the payment workflow yet; the workers start it once Temporal answers');
    return false;
  }
  return true;
}

/**
 * Inserts with a fresh payer reference, drawing another when the store already has it (the
 * unique index of migration 0031); 31^7 references make a second collision all but impossible.
 */
async function insertWithPayerReference(draw: (() => string) | undefined, insert: (ref: string | null) => Promise<LinkRow>): Promise<LinkRow> {
  for (let attempt = 0; ; attempt++) {
    try {
      return await insert(draw ? draw() : null);
    } catch (err) {
      const collided = err instanceof UniqueIntegrityConstraintViolationError && err.constraint === 'payment_links_account_ref_idx';
      if (!collided || attempt >= 4) throw err;
    }
  }
}
