import { createHash } from 'node:crypto';
import { setDepositState, upsertSeenDeposit } from '../../db/chain-repo.js';
import type { Environment } from '../../domain/environment.js';
import type { UsdtRail } from '../../domain/rails.js';
import type { PaymentReport } from '../../domain/workflow-contract.js';
import type { Stack } from './stack.js';

export interface RecordedDeposit {
  linkId: string;
  storeId: string;
  rail: UsdtRail;
  environment?: Environment;
  /** The address the transfer went to (normally the link's). */
  to: string;
  /** A short tag; the transaction hash is derived from it. */
  tag: string;
  amountMinor: bigint;
  decimals: number;
  from?: string;
  state: 'seen' | 'confirmed' | 'dropped';
}

/** A transaction hash made from a tag: 32 bytes, as on chain. */
export const txHashOf = (tag: string) => `0x${createHash('sha256').update(tag).digest('hex')}`;

/**
 * Writes a deposit exactly as the chain watcher does (seen, then confirmed at depth or dropped by
 * a reorganisation) and returns the report a watcher would signal: the evidence the link's
 * workflow reads back before it counts anything.
 */
export async function recordDeposit(stack: Stack, d: RecordedDeposit): Promise<PaymentReport> {
  const env = d.environment ?? 'test';
  const txHash = txHashOf(d.tag);
  const from = d.from ?? '0x00000000000000000000000000000000000000aa';
  // One transaction: a link's workflow reads recorded deposits by itself (pendingEvidence), so it
  // must not catch a deposit the test means as confirmed in the moment it is still seen.
  await stack.pool.transaction(async (tx) => {
    await upsertSeenDeposit(tx, d.rail, env, {
      txHash, logIndex: 0, to: d.to, from, amountMinor: d.amountMinor, decimals: d.decimals, blockNumber: 100n, blockHash: `0x${'b'.repeat(64)}`,
      owner: { kind: 'payment_link', id: d.linkId, storeId: d.storeId },
    });
    if (d.state !== 'seen') await setDepositState(tx, d.rail, env, txHash, 0, d.state);
  });
  return { rail: d.rail, key: `${txHash}:0`, externalId: txHash, payer: from, amountMinor: String(d.amountMinor), decimals: d.decimals, blockNumber: 100 };
}
