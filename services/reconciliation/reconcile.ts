import type { Logger } from 'pino';
import type { DatabasePool } from 'slonik';
import { loadCursor, upsertSeenDeposit, type DepositOwner } from '../../db/chain-repo.js';
import { insertEvent } from '../../db/event-repo.js';
import {
  addressStates,
  adjustForOutflow,
  insertFinding,
  markMatched,
  markRescanned,
  openMismatches,
  recordedDeposits,
  resolveMismatch,
  saveAddressChecks,
  targetPage,
  updateMismatch,
  type AddressState,
  type FindingRow,
  type Recorded,
  type TargetRow,
} from '../../db/reconciliation-repo.js';
import { sweptFrom } from '../../db/sweep-ledger-repo.js';
import { newId } from '../../domain/ids.js';
import { judge, openingAdjustment, rescanDue, type Verdict } from '../../domain/reconciliation.js';
import { railOfNetwork } from '../../rails/registry.js';
import type { BalanceSnapshot, ReconcileChain } from '../../rails/chain/reconcile-view.js';
import { derivedNetworks } from '../wallets/derived-wallets.js';
import { findingDto } from './dto.js';
import { methodOf } from '../../rails/methods.js';

/**
 * One page of the reconciler (docs/reconciliation.md): the balances of up to `limit` watched
 * addresses of a rail, against what the ledger recorded for them. An address the ledger does not
 * explain is rescanned on every provider (what is found is recorded as a seen deposit, and the
 * watcher settles and reports it like any other); what stays unexplained is a finding and a
 * `reconciliation.mismatch` event. Idempotent: a page run again finds its deposits recorded, its
 * findings open and its outflows already adjusted.
 */
export interface ReconcileDeps {
  pool: DatabasePool;
  /** Hands a committed event to the webhook fan-out; the outbox sweeper covers a failure. */
  dispatchEvent(eventId: string): Promise<unknown>;
  /** Called between addresses that need a rescan (an activity heartbeats). */
  progress?(): void;
  /** Told, at info, of each address whose targeted rescan recorded deposits (how many, and their transactions). */
  logger?: Pick<Logger, 'info'>;
}

export interface PageResult {
  /** The last address of the page, to continue after; null when the rail is done. */
  next: string | null;
  checked: number;
  /** Addresses whose balance could not be read, or could not be judged this run. */
  skipped: number;
  rescanned: number;
  /** Deposits targeted rescans recorded. */
  recovered: number;
  mismatches: number;
  outflows: number;
}

/** An unchanged open mismatch is rescanned again after this long (sooner when its balance or providers change). */
export const rescanAgainMs = 60 * 60_000;

/** The rails whose derived (receive-branch) addresses are watched: `transfer.confirmed`'s networks. */
const derivedRails = new Set(derivedNetworks.map((n) => railOfNetwork(n)));

interface Judged {
  target: TargetRow;
  balance: bigint;
  recorded: bigint;
  state: AddressState;
}

export async function reconcilePage(deps: ReconcileDeps, chain: ReconcileChain, q: { after: string | null; limit: number }): Promise<PageResult> {
  const { pool } = deps;
  const { rail, environment: env, family } = chain;
  const targets = await targetPage(pool, { rail, family, env, derived: derivedRails.has(rail), after: q.after, limit: q.limit });
  const result: PageResult = { next: targets.length === q.limit ? targets[targets.length - 1]!.address : null, checked: 0, skipped: 0, rescanned: 0, recovered: 0, mismatches: 0, outflows: 0 };
  if (targets.length === 0) return result;
  // Never above the watcher's cursor: a deposit it has not read yet is not a mismatch.
  const cursor = await loadCursor(pool, rail, env);
  const snap = await chain.snapshot(targets.map((t) => t.address), methodOf(rail).watching?.balancesAtCursor && cursor ? BigInt(cursor.number) : null);
  if (!snap) return { ...result, skipped: targets.length };
  const { judged, written } = await judgeAll(pool, chain, targets, snap);
  result.checked = judged.length;
  result.skipped = targets.length - judged.length;
  const open = await openMismatches(pool, rail, env, judged.map((j) => j.target.address));
  const matched: string[] = [];
  for (const j of judged) {
    const outcome = await settleAddress(deps, chain, snap, j, open.get(j.target.address) ?? null, result);
    // After an outflow the adjustment explains the balance again. Only rows this run wrote (new,
    // changed, or a day old) move their mark: a steady run rewrites nothing.
    if ((outcome === 'match' || outcome === 'outflow') && written.has(j.target.address)) matched.push(j.target.address);
  }
  await markMatched(pool, rail, env, matched, snap.countUpTo);
  return result;
}

/** Balances against the ledger; each address read for the first time is remembered with its opening adjustment. */
async function judgeAll(pool: DatabasePool, chain: ReconcileChain, targets: readonly TargetRow[], snap: BalanceSnapshot): Promise<{ judged: Judged[]; written: Set<string> }> {
  const { rail, environment: env } = chain;
  const addresses = targets.map((t) => t.address);
  const { ledgerKey } = methodOf(rail);
  const recorded = await recordedNet(pool, chain, addresses, snap.countUpTo);
  const states = await addressStates(pool, rail, env, addresses);
  const judged: Judged[] = [];
  targets.forEach((target, i) => {
    const balance = snap.balances[i];
    const rec = recorded.get(ledgerKey(target.address)) ?? { counted: 0n, later: false };
    if (balance === undefined || (!snap.exact && rec.later)) return;
    const state = states.get(target.address) ?? { adjustment: openingAdjustment(target.owner_kind, balance, rec.counted), matchedBlock: null };
    judged.push({ target, balance, recorded: rec.counted, state });
  });
  const written = await saveAddressChecks(pool, rail, env, judged.map((j) => ({ address: j.target.address, adjustment: j.state.adjustment, balance: j.balance, blockNumber: snap.countUpTo })));
  return { judged, written };
}

/**
 * What the ledger says each address holds, keyed by the rail's ledger form: its recorded deposits
 * less what sweeps moved out of it (mined or final sweep transfers, migration 0038), so a swept
 * address is no outflow and no missing money. A sweep above the height counts as `later`.
 */
async function recordedNet(pool: DatabasePool, chain: ReconcileChain, addresses: readonly string[], upTo: bigint): Promise<Map<string, Recorded>> {
  const { ledgerKey } = methodOf(chain.rail);
  const recorded = await recordedDeposits(pool, { rail: chain.rail, env: chain.environment, ledgerKey, addresses, upTo });
  const swept = await sweptFrom(pool, { rail: chain.rail, env: chain.environment, addresses, upTo });
  for (const address of addresses) {
    const out = swept.get(address.toLowerCase());
    if (!out) continue;
    const key = ledgerKey(address);
    const before = recorded.get(key) ?? { counted: 0n, later: false };
    recorded.set(key, { counted: before.counted - out.counted, later: before.later || out.later });
  }
  return recorded;
}

type Outcome = 'match' | 'mismatch' | 'outflow' | 'undecided';

async function settleAddress(deps: ReconcileDeps, chain: ReconcileChain, snap: BalanceSnapshot, j: Judged, open: FindingRow | null, result: PageResult): Promise<Outcome> {
  let verdict = judge(j.balance, j.recorded, j.state.adjustment);
  let recorded = j.recorded;
  if (verdict.kind !== 'match') {
    const openNow = open && { balance: BigInt(open.balance_minor), fingerprint: open.rescan_fingerprint, rescannedAtMs: open.rescanned_at ? Date.parse(open.rescanned_at) : null };
    // An open mismatch that nothing changed stays as reported until its rescan is due again.
    if (!rescanDue(openNow, { balance: j.balance, fingerprint: chain.fingerprint, atMs: Date.now() }, rescanAgainMs)) {
      result.mismatches++;
      return 'mismatch';
    }
    deps.progress?.();
    result.rescanned++;
    const recovered = await rescanAddress(deps.pool, chain, snap, j);
    result.recovered += recovered.length;
    if (recovered.length > 0) {
      // Public chain data only (rail, address, transaction hashes): never a provider's URL.
      deps.logger?.info(
        { rail: chain.rail, environment: chain.environment, address: j.target.address, recorded: recovered.length, txHashes: recovered },
        'deposits recorded by the reconciler (targeted rescan)',
      );
    }
    const { ledgerKey } = methodOf(chain.rail);
    const again = await recordedNet(deps.pool, chain, [j.target.address], snap.countUpTo);
    const rec = again.get(ledgerKey(j.target.address)) ?? { counted: 0n, later: false };
    if (!snap.exact && rec.later) return 'undecided';
    recorded = rec.counted;
    verdict = judge(j.balance, recorded, j.state.adjustment);
  }
  if (verdict.kind === 'mismatch') {
    result.mismatches++;
    await reportMismatch(deps, chain, snap, j, recorded, verdict, open);
    return 'mismatch';
  }
  if (open) await resolveMismatch(deps.pool, open.id);
  if (verdict.kind === 'outflow') {
    result.outflows++;
    await noteOutflow(deps.pool, chain, snap, j, recorded, verdict.amount);
  }
  return verdict.kind;
}

/** Records every transfer to the address a rescan found (on every provider, verified) as a seen deposit; returns the transactions of those that were new. */
async function rescanAddress(pool: DatabasePool, chain: ReconcileChain, snap: BalanceSnapshot, j: Judged): Promise<string[]> {
  const { target } = j;
  const from = j.state.matchedBlock !== null ? { block: j.state.matchedBlock + 1n } : { sinceMs: Date.parse(target.since) };
  const { found } = await chain.rescan(target.address, from, snap.rescanTo);
  const owner: DepositOwner = target.owner_kind === 'derived'
    ? { kind: 'derived', id: '', storeId: target.store_id, derivedIndex: target.derived_index ?? undefined }
    : { kind: target.owner_kind, id: target.owner_id!, storeId: target.store_id };
  const recovered: string[] = [];
  for (const log of found) {
    const inserted = (await upsertSeenDeposit(pool, chain.rail, chain.environment, {
      txHash: log.txHash,
      logIndex: log.logIndex,
      to: chain.stored(log.to),
      from: chain.stored(log.from),
      amountMinor: log.value,
      decimals: chain.decimals,
      blockNumber: log.blockNumber,
      blockHash: log.blockHash,
      owner,
    })) as boolean | undefined;
    // False: recorded before (the watcher got there first); undefined where the repository does not say.
    if (inserted !== false) recovered.push(log.txHash);
  }
  return recovered;
}

function findingOf(chain: ReconcileChain, snap: BalanceSnapshot, j: Judged, recorded: bigint) {
  const t = j.target;
  return {
    storeId: t.store_id,
    environment: chain.environment,
    rail: chain.rail,
    address: t.address,
    owner: { kind: t.owner_kind, id: t.owner_id, derivedIndex: t.derived_index },
    balance: j.balance,
    recorded,
    expected: j.state.adjustment + recorded,
    decimals: chain.decimals,
    blockNumber: snap.countUpTo,
  };
}

/**
 * A new or changed mismatch is recorded with its `reconciliation.mismatch` event in one
 * transaction, then handed to the webhook fan-out; an unchanged one is only marked rescanned.
 */
async function reportMismatch(
  deps: ReconcileDeps, chain: ReconcileChain, snap: BalanceSnapshot, j: Judged, recorded: bigint,
  verdict: Extract<Verdict, { kind: 'mismatch' }>, open: FindingRow | null,
): Promise<void> {
  const f = { ...findingOf(chain, snap, j, recorded), difference: verdict.unexplained };
  if (open && BigInt(open.difference_minor) === f.difference && BigInt(open.balance_minor) === f.balance) {
    await markRescanned(deps.pool, open.id, chain.fingerprint);
    return;
  }
  const eventId = await deps.pool.transaction(async (tx) => {
    const row = open
      ? await updateMismatch(tx, open.id, { ...f, rescanFingerprint: chain.fingerprint })
      : (await insertFinding(tx, { ...f, id: newId('reconciliationFinding'), kind: 'mismatch', status: 'open', rescanFingerprint: chain.fingerprint })).row;
    const event = await insertEvent(tx, {
      storeId: row.store_id,
      environment: row.environment,
      type: 'reconciliation.mismatch',
      dedupeKey: `reconciliation.mismatch:${row.id}:${row.balance_minor}:${row.difference_minor}`,
      createdAt: new Date().toISOString(),
      data: findingDto(row),
    });
    return event.id;
  });
  await deps.dispatchEvent(eventId).catch(() => undefined);
}

/** Money left the address: noted (no webhook), and the adjustment follows it, in one transaction. */
async function noteOutflow(pool: DatabasePool, chain: ReconcileChain, snap: BalanceSnapshot, j: Judged, recorded: bigint, amount: bigint): Promise<void> {
  await pool.transaction(async (tx) => {
    if (!(await adjustForOutflow(tx, chain.rail, chain.environment, j.target.address, j.state.adjustment, amount))) return;
    await insertFinding(tx, { ...findingOf(chain, snap, j, recorded), difference: amount, id: newId('reconciliationFinding'), kind: 'outflow', status: 'noted', rescanFingerprint: null });
  });
}
