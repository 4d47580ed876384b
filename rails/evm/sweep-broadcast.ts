import { BaseError, keccak256, parseTransaction, recoverTransactionAddress, RpcError, TransactionNotFoundError, type Hex, type PublicClient } from 'viem';
import type { Environment } from '../../domain/environment.js';
import type { UsdtRail } from '../../domain/rails.js';
import { SweepPlanRefused, type SweepLedgerHooks } from '../payment-method.js';
import type { RailSettings } from '../settings.js';
import { balanceClient } from './balances.js';
import { usableRailRpcUrls } from './chain-ids.js';
import type { EvmSweepPlan, EvmSweepTx } from './sweep-plan.js';

/**
 * Checks signed transactions against their EVM sweep plan (docs/treasury.md): as many as planned,
 * in order, each signed by the planned sender, to the planned recipient, with the planned value,
 * data (so token, destination and amount), nonce, chain id, gas and fee caps. Throws
 * SweepPlanRefused naming the first difference; nothing is sent then.
 */
export async function verifySignedSweep(plan: EvmSweepPlan, raws: readonly string[]): Promise<Hex[]> {
  if (raws.length !== plan.transactions.length) throw new SweepPlanRefused(`The plan has ${plan.transactions.length} transactions; ${raws.length} were given.`);
  const out: Hex[] = [];
  for (let i = 0; i < raws.length; i++) {
    const raw = raws[i]!;
    const p: EvmSweepTx = plan.transactions[i]!;
    if (!/^0x[0-9a-fA-F]+$/.test(raw)) throw new SweepPlanRefused(`Transaction ${i} is not a signed transaction.`);
    let tx: ReturnType<typeof parseTransaction>;
    let from: string;
    try {
      tx = parseTransaction(raw as Hex);
      from = (await recoverTransactionAddress({ serializedTransaction: raw as never })).toLowerCase();
    } catch {
      throw new SweepPlanRefused(`Transaction ${i} is not a signed transaction.`);
    }
    const got = {
      type: tx.type, from, to: tx.to?.toLowerCase(), value: (tx.value ?? 0n).toString(), data: (tx.data ?? '0x').toLowerCase(), nonce: tx.nonce, chainId: tx.chainId,
      gas: tx.gas?.toString(), maxFeePerGas: tx.maxFeePerGas?.toString(), maxPriorityFeePerGas: tx.maxPriorityFeePerGas?.toString(),
    };
    const want = {
      type: 'eip1559', from: p.from, to: p.to, value: p.value, data: p.data.toLowerCase(), nonce: p.nonce, chainId: p.chainId,
      gas: p.gas, maxFeePerGas: p.maxFeePerGas, maxPriorityFeePerGas: p.maxPriorityFeePerGas,
    };
    for (const k of Object.keys(want) as Array<keyof typeof want>) {
      if (got[k] !== want[k]) throw new SweepPlanRefused(`Transaction ${i} (${p.kind}) differs from the plan in ${k === 'data' ? 'its recipient, token or amount' : k}.`);
    }
    out.push(raw as Hex);
  }
  return out;
}

/** Whether the node answered the call with an error (a JSON-RPC error), rather than not at all (a timeout, a cut connection). */
const nodeAnswered = (err: unknown) => err instanceof BaseError && err.walk((e) => e instanceof RpcError) !== null;

/**
 * Sends one signed transaction of a sweep, recorded in the ledger first under its hash (keccak256
 * of the signed bytes), so a process that dies once the node took it leaves the ledger knowing it.
 * When the node answers an error, it is asked whether it holds that hash: if it does ("already
 * known", or "nonce too low" for ours, mined already) the send counts as done; if it holds none,
 * the node refused it, the ledger drops it, and the error goes on. No answer (a timeout, a cut
 * connection), or no answer to the question, leaves it `broadcast` for the follower, which finds
 * it mined or drops it once another transaction takes its nonce. Answers the hash.
 */
export async function sendLedgered(client: PublicClient, raw: Hex, index: number, ledger?: SweepLedgerHooks): Promise<Hex> {
  const hash = keccak256(raw);
  await ledger?.beforeSend(index, hash);
  try {
    await client.sendRawTransaction({ serializedTransaction: raw });
    return hash;
  } catch (err) {
    if (!nodeAnswered(err)) throw err;
    const held = await client.getTransaction({ hash }).then(() => true, (e: unknown) => (e instanceof TransactionNotFoundError ? false : null));
    if (held) return hash;
    if (held === false) await ledger?.refused(index);
    throw err;
  }
}

export interface SweepBroadcastResult {
  transactions: Array<{ kind: EvmSweepTx['kind'] | 'sponsored'; hash: string; status: 'success' | 'reverted'; blockNumber: string }>;
}

/**
 * Verifies, then sends in order (each recorded in the ledger before it is sent): every top-up,
 * waiting for each to be mined, then every transfer, waiting for each. A reverted top-up stops
 * before any transfer. Answers each hash and outcome.
 */
export async function broadcastEvmSweep(
  rails: RailSettings,
  rail: UsdtRail,
  environment: Environment,
  plan: EvmSweepPlan,
  raws: readonly string[],
  claim: () => Promise<boolean>,
  ledger?: SweepLedgerHooks,
): Promise<SweepBroadcastResult> {
  const signed = await verifySignedSweep(plan, raws);
  const url = usableRailRpcUrls(rails, rail, environment)[0];
  if (!url) throw new SweepPlanRefused(`${rail} has no usable RPC in the ${environment} environment.`);
  if (!(await claim())) throw new SweepPlanRefused('This plan was broadcast already (or has expired): make a new plan.');
  const client = balanceClient(url, 60_000);
  const result: SweepBroadcastResult = { transactions: [] };
  for (const kind of ['top_up', 'transfer'] as const) {
    const batch = plan.transactions.map((t, i) => ({ t, i, raw: signed[i]! })).filter((x) => x.t.kind === kind);
    const hashes: Hex[] = [];
    for (const { raw, i } of batch) hashes.push(await sendLedgered(client, raw, i, ledger));
    for (let i = 0; i < hashes.length; i++) {
      const receipt = await client.waitForTransactionReceipt({ hash: hashes[i]!, pollingInterval: 250, timeout: 120_000 });
      await ledger?.mined(batch[i]!.i, receipt.status, receipt.blockNumber);
      result.transactions.push({ kind, hash: hashes[i]!, status: receipt.status, blockNumber: receipt.blockNumber.toString() });
    }
    if (result.transactions.some((t) => t.status !== 'success')) break;
  }
  return result;
}

/**
 * The highest block a sweep's transaction counts as final at (docs/treasury.md): the head less the
 * rail's configured confirmations plus one, as the watcher counts a deposit's depth; without a
 * configured depth, the chain's `finalized` block. Null when no usable RPC answered.
 */
export async function evmSweepFinalizedHeight(rails: RailSettings, rail: UsdtRail, environment: Environment): Promise<bigint | null> {
  const confirmations = rails[rail].confirmations;
  for (const url of usableRailRpcUrls(rails, rail, environment)) {
    try {
      const client = balanceClient(url, 10_000);
      if (confirmations !== undefined) return (await client.getBlockNumber({ cacheTime: 0 })) - BigInt(confirmations) + 1n;
      return (await client.getBlock({ blockTag: 'finalized' })).number ?? null;
    } catch {
      // The next RPC.
    }
  }
  return null;
}
