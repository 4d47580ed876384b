import { WorkflowNotFoundError, type Client } from '@temporalio/client';
import type { Logger } from 'pino';
import type { DatabasePool } from 'slonik';
import { markSignalled, unsignalledDeposits, type DepositRow } from '../../db/chain-repo.js';
import { insertEvent } from '../../db/event-repo.js';
import type { Environment } from '../../domain/environment.js';
import { formatUnits } from '../../domain/money.js';
import type { UsdtRail } from '../../domain/rails.js';
import {
  paymentConfirmed,
  paymentDropped,
  requestWorkflowId,
  paymentSeen,
  type PaymentReport,
} from '../../workflows/payment-link-contract.js';

/** The `network` names of transfer.confirmed (DESIGN.md): as the derived-wallet balance names them. */
export const transferNetwork: Record<UsdtRail, string> = {
  USDT_TRON: 'TRON',
  USDT_BSC: 'BSC',
  USDT_ETH: 'ETH',
  USDT_POLYGON: 'POLYGON',
  USDT_SOL: 'SOL',
};

export interface SignalDeps {
  pool: DatabasePool;
  temporal: Client;
  dispatchEvent(input: { eventId: string }): Promise<unknown>;
  logger?: Pick<Logger, 'warn'>;
}

export const ownerWorkflowId = (d: Pick<DepositRow, 'owner_kind' | 'owner_id'>): string =>
  requestWorkflowId(d.owner_kind === 'invoice' ? 'invoice' : 'payment_link', d.owner_id);

function report(rail: UsdtRail, d: DepositRow): PaymentReport {
  return {
    rail,
    key: `${d.tx_hash}:${d.log_index}`,
    externalId: d.tx_hash,
    payer: d.from_address,
    amountMinor: d.amount_minor,
    decimals: d.decimals,
    blockNumber: Number(d.block_number),
    at: new Date().toISOString(),
  };
}

/**
 * Tells every deposit's owner what the chain says, then marks it told. Links and invoices get
 * signals (they deduplicate by key, so telling twice is harmless); receive-branch deposits get a
 * `transfer.confirmed` event once, deduplicated by (rail, tx, log index). An owner whose watch
 * window has closed can no longer be signalled: the deposit stays recorded in chain_deposits.
 */
export async function signalDeposits(deps: SignalDeps, rail: UsdtRail, env: Environment, head: bigint): Promise<number> {
  let told = 0;
  for (const d of await unsignalledDeposits(deps.pool, rail, env)) {
    if (d.owner_kind === 'derived') {
      if (d.state === 'confirmed') await emitTransferConfirmed(deps, rail, env, d, head);
    } else {
      const handle = deps.temporal.workflow.getHandle(ownerWorkflowId(d));
      try {
        if (d.state === 'seen') await handle.signal(paymentSeen, report(rail, d));
        else if (d.state === 'confirmed') await handle.signal(paymentConfirmed, report(rail, d));
        else await handle.signal(paymentDropped, { rail, key: `${d.tx_hash}:${d.log_index}` });
      } catch (err) {
        if (!(err instanceof WorkflowNotFoundError)) throw err;
        deps.logger?.warn({ rail, txHash: d.tx_hash, owner: d.owner_id }, 'deposit after the watch window closed; recorded only');
      }
    }
    await markSignalled(deps.pool, rail, env, d.tx_hash, d.log_index, d.state);
    told++;
  }
  return told;
}

async function emitTransferConfirmed(deps: SignalDeps, rail: UsdtRail, env: Environment, d: DepositRow, head: bigint): Promise<void> {
  const event = await insertEvent(deps.pool, {
    storeId: d.store_id,
    environment: env,
    type: 'transfer.confirmed',
    dedupeKey: `transfer.confirmed:${rail}:${d.tx_hash}:${d.log_index}`,
    createdAt: new Date().toISOString(),
    data: {
      network: transferNetwork[rail],
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
