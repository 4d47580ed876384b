import { sql, type CommonQueryMethods } from 'slonik';
import { z } from 'zod';
import type { Environment } from '../domain/environment.js';
import type { FindingKind, FindingStatus } from '../domain/reconciliation.js';

/**
 * What the reconciler reads and writes (docs/reconciliation.md): the addresses it checks, the
 * ledger's sums per address, its memory per address and its findings.
 */
export type ReconcileFamily = 'tron' | 'evm';

const targetRow = z.object({
  address: z.string(),
  owner_kind: z.enum(['payment_link', 'invoice', 'derived']),
  owner_id: z.string().nullable(),
  store_id: z.string(),
  derived_index: z.number().nullable(),
  since: z.string(),
});
export type TargetRow = z.infer<typeof targetRow>;

/**
 * One page of the addresses watched for a rail, by address: link and invoice addresses still in
 * their watch window (open, or closed within their late window) whose link offers the rail, and,
 * with `derived`, the receive addresses of the stores' current keys. `since` starts the window a
 * targeted rescan reads (the link's or the derived row's creation).
 */
export async function targetPage(
  db: CommonQueryMethods,
  q: { rail: string; family: ReconcileFamily; env: Environment; derived: boolean; after: string | null; limit: number },
): Promise<readonly TargetRow[]> {
  const after = q.after === null ? sql.fragment`` : sql.fragment`AND t.address > ${q.after}`;
  const derived = q.derived
    ? sql.fragment`UNION ALL
      SELECT d.address, 'derived', NULL, d.store_id, d.derived_index, d.created_at FROM derived_addresses d
      JOIN store_wallets w ON w.store_id = d.store_id AND w.environment = d.environment AND w.kind = d.family AND w.public_key = d.public_key
      WHERE d.family = ${q.family} AND d.environment = ${q.env}`
    : sql.fragment``;
  return db.any(sql.type(targetRow)`
    SELECT DISTINCT ON (t.address) t.address, t.owner_kind, t.owner_id, t.store_id, t.derived_index, t.since::text AS since FROM (
      SELECT w.address, w.owner_kind, w.owner_id, w.store_id, NULL::integer AS derived_index, l.created_at AS since
      FROM watched_addresses w JOIN payment_links l ON l.id = w.owner_id
      WHERE w.family = ${q.family} AND w.environment = ${q.env} AND w.watch_until > now() AND ${q.rail} = ANY(l.enabled_rails)
      ${derived}
    ) t WHERE true ${after}
    ORDER BY t.address LIMIT ${q.limit}`);
}

export interface Recorded {
  /** Non-dropped deposits at or below the height. */
  counted: bigint;
  /** Whether a non-dropped deposit lies above it. */
  later: boolean;
}

const recordedRow = z.object({ address: z.string(), counted: z.string(), later: z.boolean() });

/**
 * The ledger's non-dropped deposits per address of the rail, split at `upTo`, keyed by the rail's
 * ledger form of the address (`ledgerKey`: the payment method's; EVM addresses in any case, TRON's
 * base58 as written); absent addresses have none. Deposits are read case-blind (the index serves
 * the lowercased form) and then kept only where their ledger form is one asked for.
 */
export async function recordedDeposits(
  db: CommonQueryMethods,
  q: { rail: string; env: Environment; ledgerKey: (address: string) => string; addresses: readonly string[]; upTo: bigint },
): Promise<Map<string, Recorded>> {
  if (q.addresses.length === 0) return new Map();
  const wanted = new Set(q.addresses.map(q.ledgerKey));
  const rows = await db.any(sql.type(recordedRow)`
    SELECT to_address AS address,
      coalesce(sum(amount_minor) FILTER (WHERE block_number <= ${String(q.upTo)}), 0)::text AS counted,
      bool_or(block_number > ${String(q.upTo)}) AS later
    FROM chain_deposits
    WHERE rail = ${q.rail} AND environment = ${q.env} AND state <> 'dropped' AND lower(to_address) = ANY(${sql.array(q.addresses.map((a) => a.toLowerCase()), 'text')})
    GROUP BY to_address`);
  const recorded = new Map<string, Recorded>();
  for (const r of rows) {
    const key = q.ledgerKey(r.address);
    if (!wanted.has(key)) continue;
    const before = recorded.get(key) ?? { counted: 0n, later: false };
    recorded.set(key, { counted: before.counted + BigInt(r.counted), later: before.later || r.later });
  }
  return recorded;
}

const stateRow = z.object({ address: z.string(), adjustment_minor: z.string(), matched_block: z.string().nullable() });

export interface AddressState {
  adjustment: bigint;
  /** The last height at which the balance was explained; null when it never was. */
  matchedBlock: bigint | null;
}

/** What the reconciler remembers of each address it has read before. */
export async function addressStates(db: CommonQueryMethods, rail: string, env: Environment, addresses: readonly string[]): Promise<Map<string, AddressState>> {
  if (addresses.length === 0) return new Map();
  const rows = await db.any(sql.type(stateRow)`
    SELECT address, adjustment_minor::text, matched_block::text FROM reconciliation_addresses
    WHERE rail = ${rail} AND environment = ${env} AND address = ANY(${sql.array([...addresses], 'text')})`);
  return new Map(rows.map((r) => [r.address, { adjustment: BigInt(r.adjustment_minor), matchedBlock: r.matched_block === null ? null : BigInt(r.matched_block) }]));
}

export interface AddressCheck {
  address: string;
  adjustment: bigint;
  balance: bigint;
  blockNumber: bigint;
}

/**
 * Records what one page read, in one statement; an adjustment only moves through
 * `adjustForOutflow`. A known address is rewritten only when its balance changed or once a day
 * (which keeps it from being forgotten), so a steady run writes almost nothing. Returns the
 * addresses written.
 */
export async function saveAddressChecks(db: CommonQueryMethods, rail: string, env: Environment, checks: readonly AddressCheck[]): Promise<Set<string>> {
  if (checks.length === 0) return new Set();
  const written = await db.anyFirst(sql.type(z.object({ address: z.string() }))`
    INSERT INTO reconciliation_addresses (rail, environment, address, adjustment_minor, balance_minor, block_number)
    SELECT ${rail}, ${env}, a, j::numeric, b::numeric, n::bigint
    FROM unnest(${sql.array(checks.map((c) => c.address), 'text')}::text[], ${sql.array(checks.map((c) => String(c.adjustment)), 'text')}::text[],
      ${sql.array(checks.map((c) => String(c.balance)), 'text')}::text[], ${sql.array(checks.map((c) => String(c.blockNumber)), 'text')}::text[]) AS t(a, j, b, n)
    ON CONFLICT (rail, environment, address) DO UPDATE SET
      balance_minor = EXCLUDED.balance_minor, block_number = EXCLUDED.block_number, checked_at = now()
    WHERE reconciliation_addresses.balance_minor <> EXCLUDED.balance_minor OR reconciliation_addresses.checked_at < now() - interval '1 day'
    RETURNING address`);
  return new Set(written);
}

/**
 * Moves an address's adjustment down by an outflow, only from the value it was judged with: a
 * retried page finds it moved and does nothing. True when it moved.
 */
export async function adjustForOutflow(db: CommonQueryMethods, rail: string, env: Environment, address: string, from: bigint, amount: bigint): Promise<boolean> {
  const moved = await db.maybeOneFirst(sql.type(z.object({ address: z.string() }))`
    UPDATE reconciliation_addresses SET adjustment_minor = adjustment_minor - ${String(amount)}::numeric
    WHERE rail = ${rail} AND environment = ${env} AND address = ${address} AND adjustment_minor = ${String(from)}::numeric
    RETURNING address`);
  return moved !== null;
}

/**
 * Records that the addresses' balances were explained at `block`. A later start for a targeted
 * rescan; an older one is still correct (the rescan only reads more blocks).
 */
export async function markMatched(db: CommonQueryMethods, rail: string, env: Environment, addresses: readonly string[], block: bigint): Promise<void> {
  if (addresses.length === 0) return;
  await db.query(sql.unsafe`UPDATE reconciliation_addresses SET matched_block = ${String(block)}
    WHERE rail = ${rail} AND environment = ${env} AND address = ANY(${sql.array([...addresses], 'text')})
      AND (matched_block IS NULL OR matched_block < ${String(block)})`);
}

/** Forgets addresses not read for a week (their watch ended); a later read starts them afresh. */
export async function forgetStaleAddresses(db: CommonQueryMethods): Promise<void> {
  await db.query(sql.unsafe`DELETE FROM reconciliation_addresses WHERE checked_at < now() - interval '7 days'`);
}

export const findingRow = z.object({
  id: z.string(),
  store_id: z.string(),
  environment: z.enum(['test', 'live']),
  rail: z.string(),
  address: z.string(),
  owner_kind: z.enum(['payment_link', 'invoice', 'derived']),
  owner_id: z.string().nullable(),
  derived_index: z.number().nullable(),
  kind: z.enum(['mismatch', 'outflow', 'unmatched_payment', 'unverified_payment']),
  status: z.enum(['open', 'resolved', 'noted']),
  balance_minor: z.string(),
  recorded_minor: z.string(),
  expected_minor: z.string(),
  difference_minor: z.string(),
  decimals: z.number(),
  block_number: z.string(),
  rescan_fingerprint: z.string().nullable(),
  rescanned_at: z.string().nullable(),
  created_at: z.string(),
  updated_at: z.string(),
  resolved_at: z.string().nullable(),
});
export type FindingRow = z.infer<typeof findingRow>;

const findingColumns = sql.fragment`id, store_id, environment, rail, address, owner_kind, owner_id, derived_index, kind, status,
  balance_minor::text, recorded_minor::text, expected_minor::text, difference_minor::text, decimals, block_number::text,
  rescan_fingerprint, rescanned_at::text, created_at::text, updated_at::text, resolved_at::text`;

/** The open mismatches among some addresses of a rail. */
export async function openMismatches(db: CommonQueryMethods, rail: string, env: Environment, addresses: readonly string[]): Promise<Map<string, FindingRow>> {
  if (addresses.length === 0) return new Map();
  const rows = await db.any(sql.type(findingRow)`
    SELECT ${findingColumns} FROM reconciliation_findings
    WHERE rail = ${rail} AND environment = ${env} AND status = 'open' AND address = ANY(${sql.array([...addresses], 'text')})`);
  return new Map(rows.map((r) => [r.address, r]));
}

export interface NewFinding {
  id: string;
  storeId: string;
  environment: Environment;
  rail: string;
  address: string;
  owner: { kind: 'payment_link' | 'invoice' | 'derived'; id: string | null; derivedIndex: number | null };
  kind: FindingKind;
  status: FindingStatus;
  balance: bigint;
  recorded: bigint;
  expected: bigint;
  difference: bigint;
  decimals: number;
  blockNumber: bigint;
  rescanFingerprint: string | null;
}

/**
 * Records a finding. A second open mismatch of the address is refused by the unique index: then
 * the existing one is returned, and `created` is false.
 */
export async function insertFinding(db: CommonQueryMethods, f: NewFinding): Promise<{ row: FindingRow; created: boolean }> {
  const inserted = await db.maybeOne(sql.type(findingRow)`
    INSERT INTO reconciliation_findings (id, store_id, environment, rail, address, owner_kind, owner_id, derived_index, kind, status,
      balance_minor, recorded_minor, expected_minor, difference_minor, decimals, block_number, rescan_fingerprint, rescanned_at)
    VALUES (${f.id}, ${f.storeId}, ${f.environment}, ${f.rail}, ${f.address}, ${f.owner.kind}, ${f.owner.id}, ${f.owner.derivedIndex}, ${f.kind}, ${f.status},
      ${String(f.balance)}, ${String(f.recorded)}, ${String(f.expected)}, ${String(f.difference)}, ${f.decimals}, ${String(f.blockNumber)},
      ${f.rescanFingerprint}, ${f.rescanFingerprint === null ? null : sql.fragment`now()`})
    ON CONFLICT DO NOTHING
    RETURNING ${findingColumns}`);
  if (inserted) return { row: inserted, created: true };
  const open = (await openMismatches(db, f.rail, f.environment, [f.address])).get(f.address);
  if (!open) throw new Error(`finding ${f.id} was neither recorded nor found open`);
  return { row: open, created: false };
}

/** A changed open mismatch: its new figures; the caller reports it again. */
export async function updateMismatch(
  db: CommonQueryMethods,
  id: string,
  f: { balance: bigint; recorded: bigint; expected: bigint; difference: bigint; blockNumber: bigint; rescanFingerprint: string | null },
): Promise<FindingRow> {
  return db.one(sql.type(findingRow)`
    UPDATE reconciliation_findings SET balance_minor = ${String(f.balance)}, recorded_minor = ${String(f.recorded)},
      expected_minor = ${String(f.expected)}, difference_minor = ${String(f.difference)}, block_number = ${String(f.blockNumber)},
      rescan_fingerprint = coalesce(${f.rescanFingerprint}, rescan_fingerprint),
      rescanned_at = CASE WHEN ${f.rescanFingerprint}::text IS NULL THEN rescanned_at ELSE now() END, updated_at = now()
    WHERE id = ${id}
    RETURNING ${findingColumns}`);
}

/** Marks an open mismatch as rescanned just now, with nothing else changed. */
export async function markRescanned(db: CommonQueryMethods, id: string, fingerprint: string): Promise<void> {
  await db.query(sql.unsafe`UPDATE reconciliation_findings SET rescan_fingerprint = ${fingerprint}, rescanned_at = now() WHERE id = ${id}`);
}

/** The ledger explains the address again: its open mismatch is resolved. */
export async function resolveMismatch(db: CommonQueryMethods, id: string): Promise<void> {
  await db.query(sql.unsafe`UPDATE reconciliation_findings SET status = 'resolved', resolved_at = now(), updated_at = now()
    WHERE id = ${id} AND status = 'open'`);
}

/** A store's findings in one environment, newest first. */
export async function listFindings(
  db: CommonQueryMethods,
  scope: { storeId: string; environment: Environment },
  q: { status?: FindingStatus; limit: number },
): Promise<readonly FindingRow[]> {
  const status = q.status ? sql.fragment`AND status = ${q.status}` : sql.fragment``;
  return db.any(sql.type(findingRow)`
    SELECT ${findingColumns} FROM reconciliation_findings
    WHERE store_id = ${scope.storeId} AND environment = ${scope.environment} ${status}
    ORDER BY created_at DESC, id DESC LIMIT ${q.limit}`);
}
