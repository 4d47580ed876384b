import type { FindingRow } from '../../db/reconciliation-repo.js';
import type { Environment } from '../../domain/environment.js';
import { formatUnits } from '../../domain/money.js';
import type { FindingKind, FindingStatus } from '../../domain/reconciliation.js';
import { isRailId, railFacts } from '../../rails/registry.js';

/**
 * A reconciliation finding as merchants see it (the API, the dashboard and the data of the
 * `reconciliation.mismatch` event): amounts as decimal USDT strings, never floats.
 */
export interface FindingDto {
  id: string;
  /** `mismatch`: more on chain than recorded deposits explain; `outflow`: less (money moved out). */
  kind: FindingKind;
  /** Mismatches are `open` until the ledger explains them, then `resolved`; outflows are `noted`. */
  status: FindingStatus;
  environment: Environment;
  network: string;
  address: string;
  owner: { type: 'payment_link' | 'invoice' | 'derived'; id: string | null; index: number | null };
  /** The token balance on chain at `blockNumber`. */
  balance: string;
  /** The deposits the ledger recorded for the address up to `blockNumber`. */
  recorded: string;
  /** What the balance should be: recorded deposits, plus an opening balance, less earlier outflows. */
  expected: string;
  /** Mismatch: the amount not explained; outflow: the amount that left. */
  difference: string;
  blockNumber: number;
  createdAt: string;
  updatedAt: string;
  resolvedAt: string | null;
}

const iso = (timestamp: string) => new Date(timestamp).toISOString();

/** Row → record by allow-list. */
export function findingDto(row: FindingRow): FindingDto {
  const amount = (minor: string) => formatUnits(BigInt(minor), row.decimals);
  return {
    id: row.id,
    kind: row.kind,
    status: row.status,
    environment: row.environment,
    network: (isRailId(row.rail) && railFacts[row.rail].network) || row.rail,
    address: row.address,
    owner: { type: row.owner_kind, id: row.owner_id, index: row.derived_index },
    balance: amount(row.balance_minor),
    recorded: amount(row.recorded_minor),
    expected: amount(row.expected_minor),
    difference: amount(row.difference_minor),
    blockNumber: Number(row.block_number),
    createdAt: iso(row.created_at),
    updatedAt: iso(row.updated_at),
    resolvedAt: row.resolved_at === null ? null : iso(row.resolved_at),
  };
}
