import type { CommonQueryMethods } from 'slonik';
import type { DepositOwner } from '../../db/chain-repo.js';
import { droppedOpenDeposits, lastDeposits, openReferenceRows } from '../../db/solana-reference-repo.js';
import type { Environment } from '../../domain/environment.js';
import type { WatchSet } from '../chain/watch-set.js';

/** The rail Solana Pay references are paid on (rails/solana/facts.ts); the repository is handed it. */
export const solRail = 'USDT_SOL' as const;

/** An open Solana Pay reference, the wallet its payments must reach, and who owns it. */
export interface OpenReference {
  reference: string;
  recipient: string;
  owner: DepositOwner;
}

export type { SignatureMark } from '../../db/solana-reference-repo.js';

/**
 * The references still inside their watch window, oldest first, with the merchant wallet the
 * link was created with (payment_links.solana_address, which holds invoices too: a wallet changed
 * later does not move open links). The watch set decides who owns a reference and whether its window is open, as it
 * does for addresses on the other chains.
 */
export async function openReferences(db: CommonQueryMethods, env: Environment, watch: WatchSet, nowMs: number): Promise<OpenReference[]> {
  const rows = await openReferenceRows(db, env, nowMs);
  const open: OpenReference[] = [];
  for (const r of rows) {
    const owner = watch.match(r.address, nowMs);
    if (owner && r.recipient) open.push({ reference: r.address, recipient: r.recipient, owner });
  }
  return open;
}

export const ownerKey = (o: Pick<DepositOwner, 'kind' | 'id'>): string => `${o.kind}:${o.id}`;

export { droppedOpenDeposits, lastDeposits };
