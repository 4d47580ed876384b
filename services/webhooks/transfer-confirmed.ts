import type { DatabasePool } from 'slonik';
import type { DepositRow } from '../../db/chain-repo.js';
import { insertEvent } from '../../db/event-repo.js';
import type { Environment } from '../../domain/environment.js';
import { formatUnits } from '../../domain/money.js';
import type { UsdtRail } from '../../domain/rails.js';
import { railFacts } from '../../rails/registry.js';

export interface TransferConfirmedDeps {
  pool: DatabasePool;
  /** Hands the recorded event to the webhook fan-out. */
  dispatchEvent(input: { eventId: string }): Promise<unknown>;
}

/**
 * A deposit to a receive-branch (derived) address, confirmed: the store's `transfer.confirmed`
 * event, with its payload, recorded once per (rail, tx, log index) and handed to the fan-out.
 */
export async function emitTransferConfirmed(deps: TransferConfirmedDeps, rail: UsdtRail, env: Environment, d: DepositRow, head: bigint): Promise<void> {
  const event = await insertEvent(deps.pool, {
    storeId: d.store_id,
    environment: env,
    type: 'transfer.confirmed',
    dedupeKey: `transfer.confirmed:${rail}:${d.tx_hash}:${d.log_index}`,
    createdAt: new Date().toISOString(),
    data: {
      network: railFacts[rail].network,
      index: d.derived_index,
      address: d.to_address,
      txHash: d.tx_hash,
      logIndex: d.log_index,
      from: d.from_address,
      amount: formatUnits(BigInt(d.amount_minor), d.decimals),
      confirmations: Number(head - BigInt(d.block_number) + 1n),
      blockNumber: Number(d.block_number),
    },
  });
  await deps.dispatchEvent({ eventId: event.id });
}
