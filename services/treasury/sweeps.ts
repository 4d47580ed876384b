import { claimSweepBroadcast, findSweepPlan, insertSweepPlan } from '../../db/sweep-plan-repo.js';
import { AppError } from '../../domain/errors.js';
import { isId, newId } from '../../domain/ids.js';
import { formatUnits } from '../../domain/money.js';
import { adapterOf } from '../../rails/adapters.js';
import { SweepKindUnavailable, SweepPlanRefused, type SweepPlanBody } from '../../rails/payment-method.js';
import { railFacts } from '../../rails/registry.js';
import { nativeUsdPrice, usdValue } from '../rates/native-prices.js';
import type { ServiceDeps } from '../deps.js';
import type { StoreScope } from '../scope.js';
import { handedOutHolders, parseTreasuryRail } from './balances.js';
import { usableSweepDestination } from './destinations.js';
import { settleBroadcast, sweepLedgerHooks } from './sweep-ledger.js';

/**
 * Sweep plans (docs/treasury.md): `POST /v1/sweeps` asks the rail's adapter for an unsigned,
 * deterministic plan that moves every token on the store's handed-out addresses to an allowlisted
 * destination whose delay has passed, stores it, and answers it with its cost. Nothing is signed
 * here: Malipo holds no key.
 */
export const sweepPlanLifetimeSeconds = 15 * 60;

/** `top_up`: gas topped up from the funding address, one transfer per source; `sponsored`: EIP-7702, one transaction from the funding address moves everything. */
export type SweepPlanKind = 'top_up' | 'sponsored';

export interface SweepPlanDto {
  id: string;
  rail: string;
  kind: SweepPlanKind;
  destination: string;
  fundingAddress: string;
  createdAt: string;
  expiresAt: string;
  /** Token moved, decimal string. */
  totalToken: string;
  tokenSymbol: string;
  cost: {
    nativeCoin: string | null;
    /** The most the plan burns in fees (top-ups' and transfers'), decimal string of the native coin. */
    maxFee: string;
    /** What the funding address sends as gas to the sources, decimal string. */
    topUps: string;
    /** `maxFee` in USD at `usdPrice`, 6 decimals, rounded up. */
    usd: string | null;
    /** USD per native coin (services/rates/native-prices.ts). */
    usdPrice: string | null;
    /** Why `usd` is null. */
    usdOmitted: string | null;
  };
  plan: SweepPlanBody;
}

export async function createSweepPlan(
  deps: Pick<ServiceDeps, 'pool' | 'config'>,
  scope: StoreScope,
  input: { rail: string; destination: string; fundingAddress: string; kind?: SweepPlanKind | undefined },
): Promise<SweepPlanDto> {
  const rail = parseTreasuryRail(input.rail);
  const adapter = adapterOf(rail);
  const treasury = adapter.treasury;
  if (!adapter.sweepPlan || treasury?.kind !== 'holdings') throw new AppError('invalid_field', `Sweep plans are not built for ${rail}.`, 'rail');
  const kind = input.kind ?? 'top_up';
  const planner = kind === 'sponsored' ? adapter.sponsoredSweepPlan : adapter.sweepPlan;
  if (!planner) throw new AppError('invalid_field', `Sponsored sweep plans are not built for ${rail}.`, 'kind');
  const destination = await usableSweepDestination(deps, scope, rail, input.destination);
  const funding = treasury.parseDestination(input.fundingAddress);
  if (funding === null) throw new AppError('invalid_field', `Invalid 'fundingAddress': not a ${railFacts[rail].network ?? rail} address.`, 'fundingAddress');
  const sources = (await handedOutHolders(deps, scope, rail)) ?? [];
  let plan: SweepPlanBody;
  try {
    plan = await planner(deps.config.rails, rail, scope.environment, { sources, destination: destination.address, funding });
  } catch (err) {
    if (err instanceof SweepKindUnavailable) throw new AppError('invalid_field', err.message, 'kind');
    if (err instanceof SweepPlanRefused) throw new AppError('invalid_state', err.message);
    throw new AppError('upstream_failed', `Could not read the ${railFacts[rail].network ?? rail} network to plan the sweep; nothing was planned. Try again shortly.`);
  }
  const stored = await insertSweepPlan(deps.pool, {
    id: newId('sweepPlan'), storeId: scope.storeId, environment: scope.environment, rail, destination: destination.address, plan, lifetimeSeconds: sweepPlanLifetimeSeconds,
  });
  const total = plan.sources.reduce((sum, s) => sum + BigInt(s.amountMinor), 0n);
  const nativeDecimals = treasury.nativeDecimals;
  const coin = railFacts[rail].nativeCoin;
  const price = coin ? await nativeUsdPrice(deps.config.nativePrices, scope.environment, coin) : { ok: false as const, reason: `${rail} names no native coin.` };
  return {
    id: stored.id, rail, kind, destination: destination.address, fundingAddress: funding, createdAt: stored.createdAt, expiresAt: stored.expiresAt,
    totalToken: formatUnits(total, railFacts[rail].decimals), tokenSymbol: railFacts[rail].tokenSymbol,
    cost: {
      nativeCoin: railFacts[rail].nativeCoin ?? null,
      maxFee: formatUnits(BigInt(plan.maxFeeWei), nativeDecimals),
      topUps: formatUnits(BigInt(plan.topUpWei), nativeDecimals),
      usd: price.ok ? usdValue(BigInt(plan.maxFeeWei), nativeDecimals, price.usd) : null,
      usdPrice: price.ok ? price.usd : null,
      usdOmitted: price.ok ? null : price.reason,
    },
    plan,
  };
}

export interface SweepBroadcastDto {
  id: string;
  transactions: Array<{ kind: string; hash: string; status: 'success' | 'reverted'; blockNumber: string }>;
}

/**
 * Broadcasts a stored plan's signed transactions (`POST /v1/sweeps/:id/broadcast`): the rail's
 * adapter verifies each against the plan and refuses any difference before anything is sent; a
 * plan is broadcast once (a replay is refused), and not after it expired.
 */
export async function broadcastSweepPlan(deps: Pick<ServiceDeps, 'pool' | 'config'>, scope: StoreScope, id: string, signed: readonly string[]): Promise<SweepBroadcastDto> {
  const stored = isId('sweepPlan', id) ? await findSweepPlan(deps.pool, scope.storeId, scope.environment, id) : null;
  if (!stored) throw new AppError('not_found', 'No such sweep plan.');
  if (stored.broadcast) throw new AppError('invalid_state', 'This plan was broadcast already: make a new plan.');
  if (stored.expired) throw new AppError('invalid_state', 'This plan has expired: make a new plan and sign it.');
  const rail = parseTreasuryRail(stored.rail);
  const broadcast = adapterOf(rail).broadcastSweep;
  if (!broadcast) throw new AppError('invalid_field', `Sweeps are not broadcast on ${rail}.`, 'rail');
  const plan = stored.plan as SweepPlanBody;
  let claimed = false;
  const claim = async () => (claimed = await claimSweepBroadcast(deps.pool, scope.storeId, scope.environment, id));
  try {
    const result = await broadcast(deps.config.rails, rail, scope.environment, plan, signed, claim, sweepLedgerHooks(deps.pool, scope, id, rail, plan, stored.destination));
    // The follower takes every transaction sent to its end, and the sweep to the state they make.
    await settleBroadcast(deps, scope, id);
    return { id, transactions: result.transactions };
  } catch (err) {
    if (claimed) await settleBroadcast(deps, scope, id).catch(() => undefined);
    if (err instanceof SweepPlanRefused) throw new AppError('invalid_state', err.message);
    throw new AppError('upstream_failed', `The ${railFacts[rail].network ?? rail} network failed during the broadcast (${(err as Error).message.split('\n')[0]}); plan again to see what is left.`);
  }
}
