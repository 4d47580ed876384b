import { createHash } from 'node:crypto';
import { isDeepStrictEqual } from 'node:util';
import { recoverAddress, type Hex } from 'viem';
import { z } from 'zod';
import type { Environment } from '../../domain/environment.js';
import type { UsdtRail } from '../../domain/rails.js';
import { SweepPlanRefused, type SweepLedgerHooks, type SweepTxCheck } from '../payment-method.js';
import { railRpcUrls, type RailSettings } from '../settings.js';
import { tronAddressFromBytes } from './address.js';
import { readSolidifiedBlock, tronPost, TronReadError, type TronReadOptions } from './client.js';
import type { TronSweepPlan, TronSweepTx, TronSweepTxKind } from './sweep-plan.js';

/**
 * Broadcasting a signed TRON sweep plan (docs/treasury.md, "Broadcasting a TRON plan"), and
 * following its transactions to the solidified block.
 *
 * Each signed transaction is the signer's JSON (`raw`: the plan's transaction with its
 * `signature`). It must be the plan's own bytes (`raw_data_hex` and `txID` equal to the plan's,
 * which fixes owner, recipient, token, amount, resource, reference block and expiry; its
 * `raw_data`, when given, equal to the plan's too), and its one signature must recover to the
 * transaction's owner. Any difference refuses the whole broadcast before anything is sent. What
 * is sent is the plan's stored JSON with the verified signature (`/wallet/broadcasttransaction`).
 */
const signedTronTx = z.object({
  txID: z.string(),
  raw_data_hex: z.string(),
  raw_data: z.unknown().optional(),
  signature: z.array(z.string()),
});

export interface VerifiedTronTx {
  planned: TronSweepTx;
  signature: string;
}

/** The TRON address (base58) whose key made `signature` (r ‖ s ‖ v, hex) over `txID`; null when it recovers to none. */
async function signerOf(txID: string, signature: string): Promise<string | null> {
  try {
    const signer = await recoverAddress({ hash: `0x${txID}` as Hex, signature: `0x${signature}` as Hex });
    return tronAddressFromBytes(Buffer.from(signer.slice(2), 'hex'));
  } catch {
    return null;
  }
}

export async function verifySignedTronSweep(plan: TronSweepPlan, raws: readonly string[]): Promise<VerifiedTronTx[]> {
  if (raws.length !== plan.transactions.length) throw new SweepPlanRefused(`The plan has ${plan.transactions.length} transactions; ${raws.length} were given.`);
  const out: VerifiedTronTx[] = [];
  for (const [i, raw] of raws.entries()) {
    const p = plan.transactions[i]!;
    let parsed: z.infer<typeof signedTronTx>;
    try {
      parsed = signedTronTx.parse(JSON.parse(raw));
    } catch {
      throw new SweepPlanRefused(`Transaction ${i} is not a signed TRON transaction (the signer's JSON, with raw_data_hex, txID and one signature).`);
    }
    const hex = parsed.raw_data_hex.toLowerCase();
    if (hex !== p.raw_data_hex || createHash('sha256').update(Buffer.from(hex, 'hex')).digest('hex') !== p.txID) {
      throw new SweepPlanRefused(`Transaction ${i} (${p.kind}) differs from the plan in its bytes (owner, recipient, token, amount, resource or expiry).`);
    }
    if (parsed.txID.toLowerCase() !== p.txID) throw new SweepPlanRefused(`Transaction ${i} (${p.kind}) differs from the plan in its txID.`);
    if (parsed.raw_data !== undefined && !isDeepStrictEqual(parsed.raw_data, p.raw_data)) {
      throw new SweepPlanRefused(`Transaction ${i} (${p.kind}): its raw_data differs from the plan's (the node would build the transaction from it).`);
    }
    const signature = parsed.signature.length === 1 ? parsed.signature[0]!.toLowerCase() : '';
    if (!/^[0-9a-f]{130}$/.test(signature)) throw new SweepPlanRefused(`Transaction ${i} (${p.kind}) carries no single 65-byte signature.`);
    if ((await signerOf(p.txID, signature)) !== p.from) throw new SweepPlanRefused(`Transaction ${i} (${p.kind}) is not signed by its owner ${p.from}.`);
    out.push({ planned: p, signature });
  }
  return out;
}

/** The node refused a verified transaction (an expired or already spent plan, a funding account emptied meanwhile). */
export class TronBroadcastRefused extends Error {}

const broadcastAnswer = z.object({ result: z.boolean().optional(), code: z.string().optional(), message: z.string().optional() });

/** java-tron's `message` is the UTF-8 text in hex. */
const nodeMessage = (m: string | undefined) => (m && /^([0-9a-fA-F]{2})+$/.test(m) ? Buffer.from(m, 'hex').toString('utf8') : (m ?? ''));

async function sendTronTx(url: string, v: VerifiedTronTx, index: number, opts: TronReadOptions): Promise<void> {
  const p = v.planned;
  const body = { visible: true, txID: p.txID, raw_data: p.raw_data, raw_data_hex: p.raw_data_hex, signature: [v.signature] };
  const parsed = broadcastAnswer.safeParse(await tronPost(url, '/wallet/broadcasttransaction', body, opts));
  if (!parsed.success) throw new TronReadError('TronGrid /wallet/broadcasttransaction answered an unexpected shape');
  // A transaction the node holds already (a retried request) counts as sent.
  if (parsed.data.result === true || parsed.data.code === 'DUP_TRANSACTION_ERROR') return;
  throw new TronBroadcastRefused(`The node refused transaction ${index} (${p.kind}): ${parsed.data.code ?? 'no code'} ${nodeMessage(parsed.data.message)}`.trim());
}

/**
 * Sends one verified transaction, recorded in the ledger first under its txID (the plan's, checked
 * against its bytes), so a process that dies once the node took it leaves the ledger knowing it.
 * A refusal (the node answered no, and not DUP_TRANSACTION_ERROR) drops it in the ledger at once;
 * no answer leaves it `broadcast`, and the follower drops it once the solidified block passes its
 * expiration.
 */
async function sendLedgered(url: string, v: VerifiedTronTx, index: number, opts: TronReadOptions, ledger?: SweepLedgerHooks): Promise<void> {
  await ledger?.beforeSend(index, v.planned.txID);
  try {
    await sendTronTx(url, v, index, opts);
  } catch (err) {
    if (err instanceof TronBroadcastRefused) await ledger?.refused(index);
    throw err;
  }
}

// TransactionInfo as /wallet/gettransactioninfobyid answers it: `{}` until the transaction is in a
// block; `result: "FAILED"` for a failed one; a contract call's `receipt.result` ("SUCCESS",
// "REVERT", "OUT_OF_ENERGY", …).
const txInfo = z.object({
  blockNumber: z.number().int().nonnegative().optional(),
  result: z.string().optional(),
  receipt: z.object({ result: z.string().optional() }).optional(),
});

export interface TronTxOutcome { blockNumber: bigint; status: 'success' | 'reverted' }

/** Where the transaction stands on the node: in a block (and whether it succeeded), or null (in none). */
export async function readTronTxOutcome(url: string, txID: string, opts: TronReadOptions = {}): Promise<TronTxOutcome | null> {
  const parsed = txInfo.safeParse(await tronPost(url, '/wallet/gettransactioninfobyid', { value: txID }, opts));
  if (!parsed.success) throw new TronReadError('TronGrid /wallet/gettransactioninfobyid answered an unexpected shape');
  const info = parsed.data;
  if (info.blockNumber === undefined) return null;
  const failed = info.result === 'FAILED' || (info.receipt?.result !== undefined && info.receipt.result !== 'SUCCESS');
  return { blockNumber: BigInt(info.blockNumber), status: failed ? 'reverted' : 'success' };
}

/** The order a TRON plan is sent in: accounts created and TRX sent, energy lent, the transfers, the energy taken back. */
const phases: ReadonlyArray<readonly TronSweepTxKind[]> = [['activate', 'top_up'], ['delegate'], ['transfer'], ['undelegate']];

export interface TronBroadcastOptions {
  /** How often a sent transaction is looked for in a block, and for how long. */
  pollMs?: number;
  timeoutMs?: number;
}

export interface TronBroadcastResult {
  transactions: Array<{ kind: TronSweepTxKind; hash: string; status: 'success' | 'reverted'; blockNumber: string }>;
}

/**
 * Verifies, then sends phase by phase, waiting for every transaction of a phase to be in a block
 * before the next (a delegation needs its receiver's account, a transfer its energy): activations
 * and top-ups, delegations, transfers, undelegations. A failed activation, top-up or delegation
 * stops before any transfer; the energy lent is taken back whatever the transfers did (only the
 * delegations that went through are undelegated).
 */
export async function broadcastTronSweep(
  rails: RailSettings,
  rail: UsdtRail,
  environment: Environment,
  plan: TronSweepPlan,
  raws: readonly string[],
  claim: () => Promise<boolean>,
  ledger?: SweepLedgerHooks,
  options: TronBroadcastOptions = {},
): Promise<TronBroadcastResult> {
  const verified = await verifySignedTronSweep(plan, raws);
  const url = railRpcUrls(rails, rail, environment)[0];
  if (!url) throw new SweepPlanRefused(`${rail} has no node in the ${environment} environment.`);
  if (!(await claim())) throw new SweepPlanRefused('This plan was broadcast already (or has expired): make a new plan.');
  const opts = { timeoutMs: 20_000 };
  const result: TronBroadcastResult = { transactions: [] };
  const lent = new Set<string>();
  let proceed = true;
  for (const kinds of phases) {
    const undelegating = kinds.includes('undelegate');
    if (!proceed && !undelegating) continue;
    const batch = verified
      .map((v, i) => ({ v, i }))
      .filter(({ v }) => kinds.includes(v.planned.kind) && (!undelegating || lent.has(v.planned.source)));
    for (const { v, i } of batch) await sendLedgered(url, v, i, opts, ledger);
    for (const { v, i } of batch) {
      const outcome = await waitForTronTx(url, v.planned, opts, options);
      await ledger?.mined(i, outcome.status, outcome.blockNumber);
      result.transactions.push({ kind: v.planned.kind, hash: v.planned.txID, status: outcome.status, blockNumber: outcome.blockNumber.toString() });
      if (outcome.status !== 'success') proceed = false;
      else if (v.planned.kind === 'delegate') lent.add(v.planned.source);
    }
  }
  return result;
}

async function waitForTronTx(url: string, planned: TronSweepTx, opts: TronReadOptions, options: TronBroadcastOptions): Promise<TronTxOutcome> {
  const deadline = Date.now() + (options.timeoutMs ?? 120_000);
  for (;;) {
    const outcome = await readTronTxOutcome(url, planned.txID, opts);
    if (outcome) return outcome;
    if (Date.now() > deadline) throw new TronReadError(`transaction ${planned.txID} (${planned.kind}) is in no block after ${Math.round((options.timeoutMs ?? 120_000) / 1000)} s`);
    await new Promise((resolve) => setTimeout(resolve, options.pollMs ?? 500));
  }
}

/** TRON's final height for a sweep: the solidified block, as the watcher counts a deposit final. */
export async function tronSweepFinalizedHeight(rails: RailSettings, rail: UsdtRail, environment: Environment): Promise<bigint | null> {
  for (const url of railRpcUrls(rails, rail, environment)) {
    try {
      return (await readSolidifiedBlock(url, { timeoutMs: 10_000 })).number;
    } catch {
      // The next node.
    }
  }
  return null;
}

/**
 * Re-reads sent TRON sweep transactions (docs/treasury.md, "Followed to the end"): in a block
 * (`mined`, `failed` when it failed) on the node's current chain, or in none: `broadcast`, until
 * the solidified block is past the transaction's expiration, after which no block can take it
 * (`dropped`). The solidified block is read first: a transaction in no block after that read, whose
 * expiration that block had passed, was in none of the blocks that could have held it.
 */
export async function tronSweepTxChecks(
  rails: RailSettings,
  rail: UsdtRail,
  environment: Environment,
  txs: ReadonlyArray<{ hash: string; planned: object }>,
): Promise<{ height: bigint; txs: SweepTxCheck[] } | null> {
  const opts = { timeoutMs: 15_000 };
  for (const url of railRpcUrls(rails, rail, environment)) {
    try {
      const solid = await readSolidifiedBlock(url, opts);
      const checks: SweepTxCheck[] = [];
      // TRON has no batch read of transactions by id: a few at a time.
      for (let i = 0; i < txs.length; i += 8) {
        checks.push(...(await Promise.all(txs.slice(i, i + 8).map(async (t): Promise<SweepTxCheck> => {
          const outcome = await readTronTxOutcome(url, t.hash, opts);
          if (outcome) return { state: outcome.status === 'success' ? 'mined' : 'failed', blockNumber: outcome.blockNumber };
          const expiration = Number((t.planned as TronSweepTx).raw_data.expiration);
          return { state: solid.timestampMs !== null && solid.timestampMs > expiration ? 'dropped' : 'broadcast', blockNumber: null };
        }))));
      }
      return { height: solid.number, txs: checks };
    } catch {
      // The next node.
    }
  }
  return null;
}
