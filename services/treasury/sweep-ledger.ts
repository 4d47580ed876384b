import type { DatabasePool } from 'slonik';
import { insertEvent } from '../../db/event-repo.js';
import {
  endSweepBroadcast, findSweep, finalizeSweepTxs, listSweeps, moveSweepState, recordSweepTxChecked, recordSweepTxMined, recordSweepTxRefused, recordSweepTxSending, sweepsToFollow,
  sweepTransactions, type SweepRow, type SweepState, type SweepTxRow, type SweepTxState,
} from '../../db/sweep-ledger-repo.js';
import { sweepEnded, sweepOutcome, type SweepLedgerKind } from '../../domain/sweep-outcome.js';
import { AppError } from '../../domain/errors.js';
import { isId } from '../../domain/ids.js';
import { formatUnits } from '../../domain/money.js';
import { adapterOf } from '../../rails/adapters.js';
import { SweepPlanRefused, type SweepLedgerHooks, type SweepPlanBody } from '../../rails/payment-method.js';
import { railFacts } from '../../rails/registry.js';
import type { RailSettings } from '../../rails/settings.js';
import type { Environment } from '../../domain/environment.js';
import type { ServiceDeps } from '../deps.js';
import type { StoreScope } from '../scope.js';
import { parseTreasuryRail } from './balances.js';

/**
 * The sweep ledger (docs/treasury.md, "The ledger knows sweeps"): a broadcast records each signed
 * transaction before it is sent (under its hash, known before sending) and as it is mined; once
 * the broadcast request ended, the follower (`followSweeps`, run by the worker, and by
 * `GET /v1/sweeps/:id`) re-reads every transaction not at its end, whatever the sweep's state (a
 * reorganisation takes a mined one back to broadcast; another transaction on its nonce drops it),
 * and marks them final at the rail's confirmation depth. A sweep ends once
 * (domain/sweep-outcome.ts): `final` with a `sweep.completed` event, or `partially_completed` /
 * `failed` with a `sweep.failed` event carrying its transactions' states.
 */
/**
 * A planned transaction as the ledger reads it, of any rail's plan: EVM names the top-up's
 * recipient `to`; TRON names the source every transaction serves `source` (and its kinds
 * `activate`, `delegate`, `undelegate` besides `top_up` and `transfer`).
 */
interface PlannedTx {
  kind: 'top_up' | 'transfer' | 'sponsored' | 'activate' | 'delegate' | 'undelegate';
  from: string; to?: string; source?: string; value: string; firstSource?: number; sourceCount?: number;
}

interface LedgerRow { seq: number; kind: SweepLedgerKind; source: string; from: string; to: string; amount: bigint }

/** The ledger kind of a planned transaction that is not sponsored: an activation sends TRX like a top-up. */
const ledgerKind = (t: PlannedTx): SweepLedgerKind => (t.kind === 'activate' || t.kind === 'top_up' ? 'top_up' : t.kind === 'sponsored' ? 'transfer' : t.kind);

/**
 * The ledger rows of the plan's transaction at `index`: a top-up into its source, a transfer out
 * of its source, energy lent to or taken back from its source (TRON; the amount is the staked TRX),
 * or, for a transaction of a sponsored plan (it moves `sourceCount` sources from `firstSource`),
 * one transfer per source it moves, numbered by source.
 */
function ledgerRows(plan: SweepPlanBody, index: number, destination: string): LedgerRow[] {
  const t = (plan.transactions as readonly PlannedTx[])[index]!;
  if (t.kind === 'sponsored') {
    const first = t.firstSource ?? 0;
    return plan.sources.slice(first, first + (t.sourceCount ?? plan.sources.length))
      .map((s, j) => ({ seq: first + j, kind: 'transfer', source: s.address, from: s.address, to: destination, amount: BigInt(s.amountMinor) }));
  }
  const kind = ledgerKind(t);
  if (kind !== 'transfer') {
    const source = t.source ?? t.to!;
    return [{ seq: index, kind, source, from: t.from, to: source, amount: BigInt(t.value) }];
  }
  const amount = BigInt(plan.sources.find((s) => s.address === t.from)?.amountMinor ?? '0');
  return [{ seq: index, kind, source: t.from, from: t.from, to: destination, amount }];
}

/**
 * The plan's transactions as the ledger numbers them (by `seq`): one per planned transaction, except
 * a sponsored plan's one transaction, which the ledger records once per source it moves.
 */
function ledgerPlan(plan: SweepPlanBody): Array<{ kind: SweepLedgerKind; planned: PlannedTx }> {
  const txs = plan.transactions as readonly PlannedTx[];
  return txs.flatMap((t) => (t.kind === 'sponsored'
    ? plan.sources.slice(t.firstSource ?? 0, (t.firstSource ?? 0) + (t.sourceCount ?? plan.sources.length)).map(() => ({ kind: 'transfer' as const, planned: t }))
    : [{ kind: ledgerKind(t), planned: t }]));
}

export interface SweepTransactionDto {
  kind: SweepLedgerKind;
  /** The swept address: a top-up's recipient, a transfer's sender, the receiver of lent energy. */
  source: string;
  from: string;
  /** A transfer's: the destination. */
  to: string;
  /** Decimal string: the token for a transfer, the native coin for a top-up, the staked native coin lent for a delegation. */
  amount: string;
  hash: string;
  state: SweepTxState;
  blockNumber: string | null;
}

export interface SweepDto {
  id: string;
  rail: string;
  /** The plan's kind: top_up (gas or TRX sent to each source), sponsored (EIP-7702), or energy_delegation (TRON: staked energy lent to each source). */
  kind: 'top_up' | 'sponsored' | 'energy_delegation';
  destination: string;
  /** null: planned, never broadcast. */
  state: SweepState | null;
  totalToken: string;
  /** Token the transfers that are final moved, decimal string: all of `totalToken` once final, part of it when partially completed. */
  movedToken: string;
  tokenSymbol: string;
  createdAt: string;
  broadcastAt: string | null;
  finishedAt: string | null;
  transactions: SweepTransactionDto[];
}

const dtoKind = (planKind: string | undefined): SweepDto['kind'] => (planKind === 'sponsored' || planKind === 'energy_delegation' ? planKind : 'top_up');

function sweepDto(row: SweepRow, txs: readonly SweepTxRow[]): SweepDto {
  const rail = parseTreasuryRail(row.rail);
  const facts = railFacts[rail];
  const plan = row.plan as SweepPlanBody;
  const nativeDecimals = adapterOf(rail).treasury?.kind === 'holdings' ? (adapterOf(rail).treasury as { nativeDecimals: number }).nativeDecimals : 18;
  return {
    id: row.id,
    rail: row.rail,
    kind: dtoKind((plan as { kind?: string }).kind),
    destination: row.destination,
    state: row.state,
    totalToken: formatUnits(plan.sources.reduce((s, x) => s + BigInt(x.amountMinor), 0n), facts.decimals),
    movedToken: formatUnits(txs.filter((t) => t.kind === 'transfer' && t.state === 'final').reduce((s, t) => s + BigInt(t.amount_minor), 0n), facts.decimals),
    tokenSymbol: facts.tokenSymbol,
    createdAt: row.created_at,
    broadcastAt: row.broadcast_at,
    finishedAt: row.finished_at,
    transactions: txs.map((t) => ({
      kind: t.kind, source: t.source_address, from: t.from_address, to: t.to_address,
      amount: formatUnits(BigInt(t.amount_minor), t.kind === 'transfer' ? facts.decimals : nativeDecimals),
      hash: t.tx_hash, state: t.state, blockNumber: t.block_number,
    })),
  };
}

/**
 * How long a broadcast may go on sending (from its request's start): after that it sends nothing
 * more and ends (a chain that stalls for many minutes). Well inside the follower's takeover
 * (`sweepBroadcastTakeoverSeconds`, db/sweep-ledger-repo.ts), after which a broadcast whose
 * process died midway, and so never said it ended, is followed and ended like any other.
 */
export const sweepBroadcastSendSeconds = 15 * 60;

/**
 * The hooks a broadcast of `plan` reports to: each transaction recorded before it is sent (so the
 * ledger knows every one a node may have taken, whenever the process dies), dropped if the node
 * refused it, then mined or reverted.
 */
export function sweepLedgerHooks(pool: DatabasePool, scope: StoreScope, planId: string, rail: string, plan: SweepPlanBody, destination: string): SweepLedgerHooks {
  const sendUntil = Date.now() + sweepBroadcastSendSeconds * 1000;
  return {
    async beforeSend(index, hash) {
      if (Date.now() > sendUntil) {
        throw new SweepPlanRefused(`The broadcast ran for ${sweepBroadcastSendSeconds / 60} minutes and stopped before transaction ${index}; what was sent is followed. Plan again for what is left.`);
      }
      await pool.transaction(async (tx) => {
        for (const r of ledgerRows(plan, index, destination)) {
          await recordSweepTxSending(tx, {
            planId, seq: r.seq, storeId: scope.storeId, environment: scope.environment, rail, kind: r.kind,
            sourceAddress: r.source, from: r.from, to: r.to, amountMinor: r.amount, txHash: hash,
          });
        }
      });
    },
    async refused(index) {
      for (const r of ledgerRows(plan, index, destination)) await recordSweepTxRefused(pool, planId, r.seq);
    },
    async mined(index, status, blockNumber) {
      for (const r of ledgerRows(plan, index, destination)) await recordSweepTxMined(pool, planId, r.seq, status, blockNumber);
    },
  };
}

/**
 * After a broadcast returned (or threw): the request has ended, so the follower owns the sweep
 * from here; it is followed once now (a chain that does not answer leaves it to the next tick).
 */
export async function settleBroadcast(deps: Pick<ServiceDeps, 'pool' | 'config'>, scope: StoreScope, planId: string): Promise<void> {
  await endSweepBroadcast(deps.pool, planId);
  await followSweep(deps, scope, planId);
}

/** Ends a sweep once, with its event in the same transaction; answers the event's id, or null when it had ended already. */
async function finish(pool: DatabasePool, scope: StoreScope, planId: string, to: 'final' | 'partially_completed' | 'failed'): Promise<string | null> {
  return pool.transaction(async (tx) => {
    if (!(await moveSweepState(tx, planId, ['broadcast', 'mined'], to))) return null;
    const row = (await findSweep(tx, scope.storeId, scope.environment, planId))!;
    const txs = (await sweepTransactions(tx, [planId])).get(planId) ?? [];
    const type = to === 'final' ? 'sweep.completed' : 'sweep.failed';
    return (await insertEvent(tx, { storeId: scope.storeId, environment: scope.environment, type, dedupeKey: `${type}:${planId}`, createdAt: new Date().toISOString(), data: sweepDto(row, txs) })).id;
  });
}

/** The rail's final height after re-reading the sweep's pending transactions (recording what changed); null when the chain did not answer. */
async function recheck(pool: DatabasePool, rails: RailSettings, row: SweepRow, heights: Map<string, bigint | null>): Promise<bigint | null> {
  const rail = parseTreasuryRail(row.rail);
  const adapter = adapterOf(rail);
  const pending = ((await sweepTransactions(pool, [row.id])).get(row.id) ?? []).filter((t) => t.state === 'broadcast' || t.state === 'mined');
  const planned = ledgerPlan(row.plan as SweepPlanBody);
  if (adapter.sweepTxChecks && pending.length > 0) {
    const checked = await adapter.sweepTxChecks(rails, rail, row.environment, pending.map((t) => ({ hash: t.tx_hash, planned: planned[t.seq]!.planned })));
    if (!checked) return null;
    for (const [i, c] of checked.txs.entries()) await recordSweepTxChecked(pool, row.id, pending[i]!.seq, c.state, c.blockNumber);
    return checked.height;
  }
  const key = `${row.rail}:${row.environment}`;
  if (!heights.has(key)) heights.set(key, (await adapter.sweepFinalizedHeight?.(rails, rail, row.environment)) ?? null);
  return heights.get(key) ?? null;
}

/**
 * Follows one sweep whose broadcast request ended: re-reads its transactions not at their end,
 * marks final those at or below the rail's final height, and moves the sweep to the state they
 * make (ending it once, with its event). Idempotent; a chain that does not answer changes no
 * transaction. Answers the id of the event written, if any.
 */
async function followOne(pool: DatabasePool, rails: RailSettings, row: SweepRow, heights: Map<string, bigint | null>): Promise<string | null> {
  const height = await recheck(pool, rails, row, heights);
  if (height !== null) await finalizeSweepTxs(pool, row.id, height);
  if (row.state !== 'broadcast' && row.state !== 'mined') return null;
  const txs = (await sweepTransactions(pool, [row.id])).get(row.id) ?? [];
  const kinds = ledgerPlan(row.plan as SweepPlanBody).map((t) => t.kind);
  const outcome = sweepOutcome(kinds, txs);
  if (sweepEnded(outcome)) return finish(pool, { storeId: row.store_id, environment: row.environment }, row.id, outcome);
  if (outcome !== row.state) await moveSweepState(pool, row.id, [row.state], outcome);
  return null;
}

export async function followSweep(deps: Pick<ServiceDeps, 'pool' | 'config'>, scope: StoreScope, planId: string): Promise<void> {
  const row = await findSweep(deps.pool, scope.storeId, scope.environment, planId);
  if (row?.broadcast_ended) await followOne(deps.pool, deps.config.rails, row, new Map());
}

/**
 * Every sweep of the rail in the environment with a transaction not at its end, followed: the chain watcher's tick
 * runs it (activities/chains), off the request path. Each sweep that ended has its event handed to
 * `dispatchEvent` (the outbox sweeper covers a failure). Answers how many are still followed.
 */
export async function followSweeps(
  deps: Pick<ServiceDeps, 'pool'> & { rails: RailSettings; dispatchEvent?: (eventId: string) => Promise<unknown> },
  rail: string,
  environment: Environment,
  limit = 200,
): Promise<number> {
  const rows = await sweepsToFollow(deps.pool, { rail, environment, limit });
  const heights = new Map<string, bigint | null>();
  for (const row of rows) {
    const eventId = await followOne(deps.pool, deps.rails, row, heights);
    if (eventId) await deps.dispatchEvent?.(eventId).catch(() => undefined);
  }
  return (await sweepsToFollow(deps.pool, { rail, environment, limit })).length;
}

/** `GET /v1/sweeps/:id`: the plan's ledger state and per-transaction state (followed first, so it is current). */
export async function getSweep(deps: Pick<ServiceDeps, 'pool' | 'config'>, scope: StoreScope, id: string): Promise<SweepDto> {
  // A string that is no sweep id (a NUL, another prefix, any length) is no sweep, and never reaches the database.
  if (!isId('sweepPlan', id)) throw new AppError('not_found', 'No such sweep.');
  await followSweep(deps, scope, id);
  const row = await findSweep(deps.pool, scope.storeId, scope.environment, id);
  if (!row) throw new AppError('not_found', 'No such sweep.');
  return sweepDto(row, (await sweepTransactions(deps.pool, [id])).get(id) ?? []);
}

/** The scope's broadcast sweeps, newest first (the API and the dashboard). */
export async function recentSweeps(deps: Pick<ServiceDeps, 'pool'>, scope: StoreScope, limit: number): Promise<SweepDto[]> {
  const rows = await listSweeps(deps.pool, scope.storeId, scope.environment, limit);
  const txs = await sweepTransactions(deps.pool, rows.map((r) => r.id));
  return rows.map((r) => sweepDto(r, txs.get(r.id) ?? []));
}
