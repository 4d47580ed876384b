import { sql, type CommonQueryMethods } from 'slonik';
import { z } from 'zod';
import type { Environment } from '../domain/environment.js';
import type { SweepLedgerKind, SweepOutcome as SweepState, SweepTxState } from '../domain/sweep-outcome.js';

/**
 * The sweep ledger (migration 0038, docs/treasury.md): a broadcast plan's state and each of its
 * transactions (a token transfer out of a source, a gas top-up into one; on TRON, energy lent to a
 * source and taken back, migration 0046) with its hash and state.
 * Sweeps are never deposits or payments; the reconciler subtracts a source's mined transfers.
 */
export type { SweepOutcome as SweepState, SweepTxState } from '../domain/sweep-outcome.js';

export interface SweepTxInsert {
  planId: string;
  seq: number;
  storeId: string;
  environment: Environment;
  rail: string;
  kind: SweepLedgerKind;
  sourceAddress: string;
  from: string;
  to: string;
  amountMinor: bigint;
  txHash: string;
}

/** A transaction about to be sent (its hash is known before), as `broadcast`; idempotent on (plan, seq). */
export async function recordSweepTxSending(db: CommonQueryMethods, t: SweepTxInsert): Promise<void> {
  await db.query(sql.unsafe`
    INSERT INTO sweep_transactions (plan_id, seq, store_id, environment, rail, kind, source_address, from_address, to_address, amount_minor, tx_hash, state)
    VALUES (${t.planId}, ${t.seq}, ${t.storeId}, ${t.environment}, ${t.rail}, ${t.kind}, ${t.sourceAddress}, ${t.from}, ${t.to}, ${String(t.amountMinor)}::numeric, ${t.txHash}, 'broadcast')
    ON CONFLICT (plan_id, seq) DO NOTHING`);
}

/** The node refused the transaction (it holds none of that hash): `dropped`, only from `broadcast` in no block. */
export async function recordSweepTxRefused(db: CommonQueryMethods, planId: string, seq: number): Promise<void> {
  await db.query(sql.unsafe`
    UPDATE sweep_transactions SET state = 'dropped', updated_at = now()
    WHERE plan_id = ${planId} AND seq = ${seq} AND state = 'broadcast' AND block_number IS NULL`);
}

/** Mined (a success) or failed (reverted), at its block; only from `broadcast`. */
export async function recordSweepTxMined(db: CommonQueryMethods, planId: string, seq: number, status: 'success' | 'reverted', blockNumber: bigint): Promise<void> {
  await db.query(sql.unsafe`
    UPDATE sweep_transactions SET state = ${status === 'success' ? 'mined' : 'failed'}, block_number = ${String(blockNumber)}::bigint, updated_at = now()
    WHERE plan_id = ${planId} AND seq = ${seq} AND state = 'broadcast'`);
}

/**
 * What a re-read found of a transaction not yet at its end (broadcast or mined): moved to `state`
 * at `blockNumber` (null: in no block). A reorganisation can take a mined one back to broadcast.
 */
export async function recordSweepTxChecked(db: CommonQueryMethods, planId: string, seq: number, state: Exclude<SweepTxState, 'final'>, blockNumber: bigint | null): Promise<void> {
  await db.query(sql.unsafe`
    UPDATE sweep_transactions SET state = ${state}, block_number = ${blockNumber === null ? null : String(blockNumber)}::bigint, updated_at = now()
    WHERE plan_id = ${planId} AND seq = ${seq} AND state IN ('broadcast', 'mined')
      AND (state <> ${state} OR block_number IS DISTINCT FROM ${blockNumber === null ? null : String(blockNumber)}::bigint)`);
}

/** The broadcast request ended (sent everything, or stopped): from now the follower owns the sweep. */
export async function endSweepBroadcast(db: CommonQueryMethods, planId: string): Promise<void> {
  await db.query(sql.unsafe`UPDATE sweep_plans SET broadcast_ended_at = coalesce(broadcast_ended_at, now()) WHERE id = ${planId}`);
}

/** Moves a plan's state from one of `from` to `to`; true when this call moved it (so its event is written once). */
export async function moveSweepState(db: CommonQueryMethods, planId: string, from: readonly SweepState[], to: SweepState): Promise<boolean> {
  const done = to === 'final' || to === 'failed' || to === 'partially_completed';
  const row = await db.maybeOneFirst(sql.type(z.object({ id: z.string() }))`
    UPDATE sweep_plans SET state = ${to}, finished_at = ${done ? sql.fragment`now()` : sql.fragment`finished_at`}
    WHERE id = ${planId} AND state = ANY(${sql.array([...from], 'text')}) RETURNING id`);
  return row !== null;
}

/** Marks final every mined transaction of the plan at or below `height`. */
export async function finalizeSweepTxs(db: CommonQueryMethods, planId: string, height: bigint): Promise<void> {
  await db.query(sql.unsafe`
    UPDATE sweep_transactions SET state = 'final', updated_at = now()
    WHERE plan_id = ${planId} AND state = 'mined' AND block_number <= ${String(height)}::bigint`);
}

const sweepRow = z.object({
  id: z.string(),
  store_id: z.string(),
  environment: z.enum(['test', 'live']),
  rail: z.string(),
  destination: z.string(),
  state: z.enum(['broadcast', 'mined', 'final', 'partially_completed', 'failed']).nullable(),
  broadcast_ended: z.boolean(),
  created_at: z.string(),
  expires_at: z.string(),
  broadcast_at: z.string().nullable(),
  finished_at: z.string().nullable(),
  plan: z.any(),
});
export type SweepRow = z.infer<typeof sweepRow>;

const txRow = z.object({
  plan_id: z.string(),
  seq: z.number(),
  kind: z.enum(['top_up', 'transfer', 'delegate', 'undelegate']),
  source_address: z.string(),
  from_address: z.string(),
  to_address: z.string(),
  amount_minor: z.string(),
  tx_hash: z.string(),
  state: z.enum(['broadcast', 'mined', 'final', 'failed', 'dropped']),
  block_number: z.string().nullable(),
});
export type SweepTxRow = z.infer<typeof txRow>;

const iso = (col: string) => sql.fragment`to_char(${sql.identifier([col])} AT TIME ZONE 'UTC', 'YYYY-MM-DD"T"HH24:MI:SS.MS"Z"')`;
/**
 * How long after it started a broadcast is taken as over even if its request never said so (its
 * process died midway): the broadcast itself stops sending well before (services/treasury/
 * sweep-ledger.ts, `sweepBroadcastSendSeconds`), so the follower never ends a sweep still being sent.
 */
export const sweepBroadcastTakeoverSeconds = 20 * 60;
const broadcastOver = sql.fragment`(broadcast_ended_at IS NOT NULL OR broadcast_at < now() - make_interval(secs => ${sweepBroadcastTakeoverSeconds}))`;
const sweepColumns = sql.fragment`id, store_id, environment, rail, destination, state, ${iso('created_at')} AS created_at, ${iso('expires_at')} AS expires_at,
  ${iso('broadcast_at')} AS broadcast_at, ${iso('finished_at')} AS finished_at, ${broadcastOver} AS broadcast_ended, plan`;

export async function findSweep(db: CommonQueryMethods, storeId: string, environment: Environment, id: string): Promise<SweepRow | null> {
  return db.maybeOne(sql.type(sweepRow)`SELECT ${sweepColumns} FROM sweep_plans WHERE id = ${id} AND store_id = ${storeId} AND environment = ${environment}`);
}

/** The scope's broadcast sweeps, newest first. */
export async function listSweeps(db: CommonQueryMethods, storeId: string, environment: Environment, limit: number): Promise<readonly SweepRow[]> {
  return db.any(sql.type(sweepRow)`SELECT ${sweepColumns} FROM sweep_plans
    WHERE store_id = ${storeId} AND environment = ${environment} AND broadcast_at IS NOT NULL ORDER BY broadcast_at DESC, id LIMIT ${limit}`);
}

/**
 * The follower's work, oldest first: sweeps whose broadcast request ended (or started longer ago
 * than a broadcast may run: its process died) and that have not (or that ended with a transaction
 * still pending: every sent transaction is followed to its end).
 */
export async function sweepsToFollow(db: CommonQueryMethods, q: { rail: string; environment: Environment; limit: number }): Promise<readonly SweepRow[]> {
  return db.any(sql.type(sweepRow)`SELECT ${sweepColumns} FROM sweep_plans p
    WHERE p.rail = ${q.rail} AND p.environment = ${q.environment} AND p.broadcast_at IS NOT NULL AND ${broadcastOver}
      AND (p.state IN ('broadcast', 'mined') OR p.id IN (
        SELECT plan_id FROM sweep_transactions WHERE rail = ${q.rail} AND environment = ${q.environment} AND state IN ('broadcast', 'mined')))
    ORDER BY p.broadcast_at LIMIT ${q.limit}`);
}

export async function sweepTransactions(db: CommonQueryMethods, planIds: readonly string[]): Promise<Map<string, SweepTxRow[]>> {
  const out = new Map<string, SweepTxRow[]>();
  if (planIds.length === 0) return out;
  const rows = await db.any(sql.type(txRow)`
    SELECT plan_id, seq, kind, source_address, from_address, to_address, amount_minor::text, tx_hash, state, block_number::text
    FROM sweep_transactions WHERE plan_id = ANY(${sql.array([...planIds], 'text')}) ORDER BY plan_id, seq`);
  for (const r of rows) out.set(r.plan_id, [...(out.get(r.plan_id) ?? []), r]);
  return out;
}

export interface Swept {
  /** Token swept out of the address by transfers mined at or below the height. */
  counted: bigint;
  /** Whether a mined transfer out of it lies above the height. */
  later: boolean;
}

/**
 * What sweeps took out of each address of the rail (mined or final transfers), split at `upTo`,
 * keyed by the lowercased address. Top-ups bring the native coin only and are not counted.
 */
export async function sweptFrom(
  db: CommonQueryMethods,
  q: { rail: string; env: Environment; addresses: readonly string[]; upTo: bigint },
): Promise<Map<string, Swept>> {
  if (q.addresses.length === 0) return new Map();
  const rows = await db.any(sql.type(z.object({ address: z.string(), counted: z.string(), later: z.boolean() }))`
    SELECT lower(source_address) AS address,
      coalesce(sum(amount_minor) FILTER (WHERE block_number <= ${String(q.upTo)}::bigint), 0)::text AS counted,
      bool_or(block_number > ${String(q.upTo)}::bigint) AS later
    FROM sweep_transactions
    WHERE kind = 'transfer' AND rail = ${q.rail} AND environment = ${q.env} AND state IN ('mined', 'final')
      AND lower(source_address) = ANY(${sql.array(q.addresses.map((a) => a.toLowerCase()), 'text')})
    GROUP BY lower(source_address)`);
  return new Map(rows.map((r) => [r.address, { counted: BigInt(r.counted), later: r.later }]));
}
