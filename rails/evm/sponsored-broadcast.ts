import { decodeEventLog, decodeFunctionData, parseTransaction, recoverAddress, recoverTransactionAddress, type Address, type Hex } from 'viem';
import { recoverAuthorizationAddress } from 'viem/utils';
import type { Environment } from '../../domain/environment.js';
import type { UsdtRail } from '../../domain/rails.js';
import { SweepPlanRefused, type SweepLedgerHooks } from '../payment-method.js';
import type { RailSettings } from '../settings.js';
import { balanceClient } from './balances.js';
import { usableRailRpcUrls } from './chain-ids.js';
import type { EvmSponsoredPlan } from './sponsored-plan.js';
import { sendLedgered, type SweepBroadcastResult } from './sweep-broadcast.js';
import { entryPointAbi, userOpHash, type PlannedUserOp } from './user-op.js';

/**
 * Checks the signed transactions of a sponsored sweep plan (docs/treasury.md) against the plan,
 * then sends them. Trusted is only what recovers from a signature: the transaction's sender, each
 * authorization's signer, each user operation's signer. Any difference from the plan is a
 * SweepPlanRefused naming it, and nothing is sent.
 */
const secp256k1HalfOrder = 0x7fffffffffffffffffffffffffffffff5d576e7357a4501ddfe92f46681b20a0n;

/** Which planned transaction is checked, and the sources (authorizations, ops) it carries. */
interface Part { tx: number; first: number; count: number }

function refuse(part: Part, what: string): never {
  throw new SweepPlanRefused(`Sponsored transaction ${part.tx} differs from the plan in ${what}.`);
}

async function checkAuthorizations(plan: EvmSponsoredPlan, part: Part, list: NonNullable<ReturnType<typeof parseTransaction>['authorizationList']>): Promise<void> {
  const refuse_: (what: string) => never = (what) => refuse(part, what);
  if (list.length !== part.count) refuse_('its number of authorizations');
  for (let j = 0; j < list.length; j++) {
    const i = part.first + j;
    const got = list[j]!;
    const want = plan.authorizations[i]!;
    if (got.address.toLowerCase() !== plan.delegate || got.chainId !== plan.chainId || got.nonce !== want.nonce) refuse_(`authorization ${i} (its delegate, chain id or nonce)`);
    // EIP-7702 skips a high-s authorization: the op would then fail on chain, at the funding address's cost.
    if (BigInt(got.s) > secp256k1HalfOrder) refuse_(`authorization ${i} (a malleable signature)`);
    let signer: string;
    try {
      signer = (await recoverAuthorizationAddress({ authorization: got })).toLowerCase();
    } catch {
      refuse_(`authorization ${i} (no valid signature)`);
    }
    if (signer !== want.source) refuse_(`authorization ${i} (not signed by ${want.source})`);
  }
}

const opFields = ['sender', 'nonce', 'initCode', 'callData', 'accountGasLimits', 'preVerificationGas', 'gasFees', 'paymasterAndData'] as const;

async function checkUserOps(plan: EvmSponsoredPlan, part: Part, data: Hex): Promise<void> {
  const refuse_: (what: string) => never = (what) => refuse(part, what);
  let call: ReturnType<typeof decodeFunctionData<typeof entryPointAbi>>;
  try {
    call = decodeFunctionData({ abi: entryPointAbi, data });
  } catch {
    refuse_('its call (not handleOps)');
  }
  if (call.functionName !== 'handleOps') refuse_('its call (not handleOps)');
  const [ops, beneficiary] = call.args;
  if (beneficiary.toLowerCase() !== plan.funding) refuse_('its beneficiary');
  if (ops.length !== part.count) refuse_('its number of user operations');
  for (let j = 0; j < ops.length; j++) {
    const i = part.first + j;
    const op = ops[j]!;
    const want: PlannedUserOp = plan.userOps[i]!;
    const got: Record<(typeof opFields)[number], string> = {
      sender: op.sender.toLowerCase(), nonce: op.nonce.toString(), initCode: op.initCode.toLowerCase(), callData: op.callData.toLowerCase(),
      accountGasLimits: op.accountGasLimits.toLowerCase(), preVerificationGas: op.preVerificationGas.toString(), gasFees: op.gasFees.toLowerCase(),
      paymasterAndData: op.paymasterAndData.toLowerCase(),
    };
    for (const k of opFields) {
      if (got[k] !== String(want[k]).toLowerCase()) refuse_(`user operation ${i}'s ${k === 'callData' ? 'call (its token, recipient or amount)' : k}`);
    }
    let signer: string;
    try {
      signer = (await recoverAddress({ hash: userOpHash(want, plan.delegate as Address, plan.entryPoint as Address, plan.chainId), signature: op.signature })).toLowerCase();
    } catch {
      refuse_(`user operation ${i}'s signature`);
    }
    if (signer !== want.sender) refuse_(`user operation ${i}'s signature (not by ${want.sender})`);
  }
}

/** One signed type-4 transaction, checked field by field against the planned one at `index`; answers it, or refuses. */
async function verifyOne(plan: EvmSponsoredPlan, index: number, raw: string): Promise<Hex> {
  const p = plan.transactions[index]!;
  const part: Part = { tx: index, first: p.firstSource, count: p.sourceCount };
  let tx: ReturnType<typeof parseTransaction>;
  let from: string;
  try {
    if (!/^0x[0-9a-fA-F]+$/.test(raw)) throw new Error('no hex');
    tx = parseTransaction(raw as Hex);
    from = (await recoverTransactionAddress({ serializedTransaction: raw as never })).toLowerCase();
  } catch {
    throw new SweepPlanRefused(`Transaction ${index} is not a signed transaction.`);
  }
  const got = {
    type: tx.type, from, to: tx.to?.toLowerCase(), value: (tx.value ?? 0n).toString(), nonce: tx.nonce, chainId: tx.chainId,
    gas: tx.gas?.toString(), maxFeePerGas: tx.maxFeePerGas?.toString(), maxPriorityFeePerGas: tx.maxPriorityFeePerGas?.toString(),
  };
  const want = { type: 'eip7702', from: p.from, to: p.to, value: p.value, nonce: p.nonce, chainId: p.chainId, gas: p.gas, maxFeePerGas: p.maxFeePerGas, maxPriorityFeePerGas: p.maxPriorityFeePerGas };
  for (const k of Object.keys(want) as Array<keyof typeof want>) if (got[k] !== want[k]) refuse(part, k === 'from' ? 'its sender' : k);
  await checkAuthorizations(plan, part, tx.authorizationList ?? []);
  await checkUserOps(plan, part, tx.data ?? '0x');
  return raw as Hex;
}

/** Every signed transaction of the plan, in order, each checked against its planned one; refuses any difference. */
export async function verifySignedSponsoredSweep(plan: EvmSponsoredPlan, raws: readonly string[]): Promise<Hex[]> {
  if (raws.length !== plan.transactions.length) throw new SweepPlanRefused(`The plan has ${plan.transactions.length} transactions; ${raws.length} were given.`);
  const out: Hex[] = [];
  for (let i = 0; i < raws.length; i++) out.push(await verifyOne(plan, i, raws[i]!));
  return out;
}

/** Whether every op of the planned transaction has a `UserOperationEvent` saying it succeeded: handleOps can be mined while an op's call failed. */
function everyOpSucceeded(plan: EvmSponsoredPlan, part: { firstSource: number; sourceCount: number }, logs: ReadonlyArray<{ address: string; topics: readonly Hex[]; data: Hex }>): boolean {
  const ok = new Set<string>();
  for (const log of logs) {
    if (log.address.toLowerCase() !== plan.entryPoint) continue;
    try {
      const event = decodeEventLog({ abi: entryPointAbi, topics: log.topics as [Hex, ...Hex[]], data: log.data });
      if (event.eventName === 'UserOperationEvent' && event.args.success) ok.add(event.args.sender.toLowerCase());
    } catch {
      // Another of EntryPoint's events.
    }
  }
  return plan.userOps.slice(part.firstSource, part.firstSource + part.sourceCount).every((op) => ok.has(op.sender));
}

/**
 * Verifies every transaction, claims the plan (a replay is refused), sends them in order (each
 * recorded in the ledger first: `sendLedgered`) and waits until each is mined. One counts as a success only when every user operation in it succeeded:
 * otherwise the sweep fails, though the ops that succeeded moved their tokens (the chain shows them).
 */
export async function broadcastSponsoredSweep(
  rails: RailSettings, rail: UsdtRail, environment: Environment, plan: EvmSponsoredPlan, raws: readonly string[], claim: () => Promise<boolean>, ledger?: SweepLedgerHooks,
): Promise<SweepBroadcastResult> {
  const signed = await verifySignedSponsoredSweep(plan, raws);
  const url = usableRailRpcUrls(rails, rail, environment)[0];
  if (!url) throw new SweepPlanRefused(`${rail} has no usable RPC in the ${environment} environment.`);
  if (!(await claim())) throw new SweepPlanRefused('This plan was broadcast already (or has expired): make a new plan.');
  const client = balanceClient(url, 60_000);
  const hashes: Hex[] = [];
  for (let i = 0; i < signed.length; i++) hashes.push(await sendLedgered(client, signed[i]!, i, ledger));
  const result: SweepBroadcastResult = { transactions: [] };
  for (let i = 0; i < hashes.length; i++) {
    const receipt = await client.waitForTransactionReceipt({ hash: hashes[i]!, pollingInterval: 250, timeout: 120_000 });
    const status = receipt.status === 'success' && everyOpSucceeded(plan, plan.transactions[i]!, receipt.logs) ? 'success' : 'reverted';
    await ledger?.mined(i, status, receipt.blockNumber);
    result.transactions.push({ kind: 'sponsored', hash: hashes[i]!, status, blockNumber: receipt.blockNumber.toString() });
  }
  return result;
}
