import type { Client } from '@temporalio/client';
import type { Logger } from 'pino';
import type { DatabasePool } from 'slonik';
import type { Metrics } from '../../domain/metrics.js';
import { markSignalled, unsignalledDeposits, type DepositRow } from '../../db/chain-repo.js';
import type { Environment } from '../../domain/environment.js';
import type { UsdtRail } from '../../domain/rails.js';
import type { PaymentReport } from '../../domain/payment-report.js';
import { emitTransferConfirmed } from '../../services/webhooks/transfer-confirmed.js';
import { tellDeposit } from '../../temporal-client/index.js';

export interface SignalDeps {
  pool: DatabasePool;
  temporal: Client;
  dispatchEvent(input: { eventId: string }): Promise<unknown>;
  logger?: Pick<Logger, 'warn'>;
  metrics?: Metrics;
}

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
 * `transfer.confirmed` event once, deduplicated by (rail, tx, log index). A signal is only a
 * wake-up: an owner whose workflow is not there (not started yet, or its watch window closed) is
 * not told, and loses nothing by it. A workflow reads every deposit recorded for it when it starts
 * and before it ends (`pendingEvidence`); after its window the deposit stays recorded in chain_deposits.
 */
export async function signalDeposits(deps: SignalDeps, rail: UsdtRail, env: Environment, head: bigint): Promise<number> {
  let told = 0;
  for (const d of await unsignalledDeposits(deps.pool, rail, env)) {
    if (d.owner_kind === 'derived') {
      if (d.state === 'confirmed') await emitTransferConfirmed(deps, rail, env, d, head);
    } else {
      const owner = { kind: d.owner_kind === 'invoice' ? ('invoice' as const) : ('payment_link' as const), id: d.owner_id };
      const news = d.state === 'seen' || d.state === 'confirmed'
        ? { state: d.state, report: report(rail, d) }
        : { state: 'dropped' as const, rail, key: `${d.tx_hash}:${d.log_index}` };
      if (!(await tellDeposit(deps.temporal, owner, news))) {
        deps.logger?.warn({ rail, txHash: d.tx_hash, owner: d.owner_id }, 'no workflow to wake for this deposit (not started yet, or its window closed); it reads the deposit when it starts');
      }
    }
    await markSignalled(deps.pool, rail, env, d.tx_hash, d.log_index, d.state);
    // Each state of a deposit is told once, so each is counted once (a deposit already deep enough when first read is only `confirmed`).
    deps.metrics?.deposits(d.state === 'seen' || d.state === 'confirmed' ? d.state : 'dropped', rail, env, 1);
    told++;
  }
  return told;
}
