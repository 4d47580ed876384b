import { createPublicClient, http, type Address, type Hex, type PublicClient } from 'viem';
import type { Environment } from '../../domain/environment.js';
import type { UsdtRail } from '../../domain/rails.js';
import type { SweepTxCheck } from '../payment-method.js';
import type { RailSettings } from '../settings.js';
import { usableRailRpcUrls } from './chain-ids.js';
import type { EvmSweepTx } from './sweep-plan.js';

/**
 * Re-reads sent sweep transactions until each reaches its end (docs/treasury.md, "Followed to
 * the end"). A receipt says mined (or reverted) and at which block; a transaction a
 * reorganisation took out has no receipt again and is `broadcast`, until it is mined anew or its
 * sender's nonce, read at the final height, shows another transaction took its place (`dropped`).
 * The nonce is read before the receipt: a transaction of ours holding that nonce at a final block
 * has a receipt then. Reads go as JSON-RPC batches, not one request per transaction.
 */
function batchClient(url: string): PublicClient {
  return createPublicClient({ transport: http(url, { timeout: 15_000, retryCount: 1, batch: { batchSize: 200 } }) });
}

async function finalHeight(client: PublicClient, confirmations: number | undefined): Promise<bigint | null> {
  if (confirmations !== undefined) return (await client.getBlockNumber({ cacheTime: 0 })) - BigInt(confirmations) + 1n;
  return (await client.getBlock({ blockTag: 'finalized' })).number ?? null;
}

async function checkOne(client: PublicClient, height: bigint, hash: Hex, planned: EvmSweepTx): Promise<SweepTxCheck> {
  const nonceAtFinal = await client.getTransactionCount({ address: planned.from as Address, blockNumber: height });
  const receipt = await client.getTransactionReceipt({ hash }).catch((err: unknown) => {
    if ((err as Error).name === 'TransactionReceiptNotFoundError') return null;
    throw err;
  });
  if (receipt) return { state: receipt.status === 'success' ? 'mined' : 'failed', blockNumber: receipt.blockNumber };
  return { state: nonceAtFinal > planned.nonce ? 'dropped' : 'broadcast', blockNumber: null };
}

export async function evmSweepTxChecks(
  rails: RailSettings,
  rail: UsdtRail,
  environment: Environment,
  txs: ReadonlyArray<{ hash: string; planned: object }>,
): Promise<{ height: bigint; txs: SweepTxCheck[] } | null> {
  for (const url of usableRailRpcUrls(rails, rail, environment)) {
    try {
      const client = batchClient(url);
      const height = await finalHeight(client, rails[rail].confirmations);
      if (height === null) continue;
      const checks = await Promise.all(txs.map((t) => checkOne(client, height, t.hash as Hex, t.planned as EvmSweepTx)));
      return { height, txs: checks };
    } catch {
      // The next RPC.
    }
  }
  return null;
}
