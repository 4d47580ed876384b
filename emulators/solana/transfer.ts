import type { Ledger } from './ledger.js';
import { associatedTokenAddress, programs, type AccountKey, type Instruction, type LedgerTx, type TokenBalance, type TransferSpec } from './types.js';

const lamportsPerSignature = 5_000;
const tokenAccountRent = 2_039_280;
const mintRent = 1_461_600;
const programLamports = 1_141_440;
/** A fee payer the emulator has not seen starts with 10 SOL, so tests need no airdrop step. */
const startingLamports = 10_000_000_000;
const computeBudgetPerInstruction = 200_000;

/** `real_number_string_trimmed` + f64 `uiAmount`, as the node formats token amounts. */
export function uiTokenAmount(amount: bigint, decimals: number) {
  const digits = amount.toString().padStart(decimals + 1, '0');
  const whole = digits.slice(0, digits.length - decimals);
  const fraction = digits.slice(digits.length - decimals).replace(/0+$/, '');
  const uiAmountString = fraction ? `${whole}.${fraction}` : whole;
  return { amount: amount.toString(), decimals, uiAmount: Number(uiAmountString), uiAmountString };
}

function transferCheckedData(amount: bigint, decimals: number): Buffer {
  const data = Buffer.alloc(10);
  data.writeUInt8(12, 0); // TokenInstruction::TransferChecked
  data.writeBigUInt64LE(amount, 1);
  data.writeUInt8(decimals, 9);
  return data;
}

function instructionsOf(spec: TransferSpec, feePayer: string, source: string, destination: string, decimals: number, create: boolean): Instruction[] {
  const refs = spec.references ?? [];
  const out: Instruction[] = [];
  if (create) {
    out.push({
      programId: programs.ata,
      accounts: [feePayer, destination, spec.toOwner, spec.mint, programs.system, programs.token],
      data: Buffer.alloc(0),
      parsed: { program: 'spl-associated-token-account', parsed: { type: 'create', info: { account: destination, mint: spec.mint, source: feePayer, systemProgram: programs.system, tokenProgram: programs.token, wallet: spec.toOwner } } },
    });
  }
  if (spec.memo !== undefined) out.push({ programId: programs.memo, accounts: [], data: Buffer.from(spec.memo, 'utf8'), parsed: { program: 'spl-memo', parsed: spec.memo } });
  // The node's token parser reads accounts after the fourth as multisig signers, so a transfer
  // carrying references shows `multisigAuthority` + `signers` instead of `authority`.
  const authority = refs.length ? { multisigAuthority: spec.from, signers: refs } : { authority: spec.from };
  out.push({
    programId: programs.token,
    accounts: [source, spec.mint, destination, spec.from, ...refs],
    data: transferCheckedData(spec.amount, decimals),
    parsed: { program: 'spl-token', parsed: { type: 'transferChecked', info: { source, mint: spec.mint, destination, tokenAmount: uiTokenAmount(spec.amount, decimals), ...authority } } },
  });
  return out;
}

/** Message account order: writable signers, read-only signers, writable non-signers, read-only non-signers. */
function keysOf(spec: TransferSpec, feePayer: string, source: string, destination: string, create: boolean): AccountKey[] {
  const keys: AccountKey[] = [];
  const add = (pubkey: string, signer: boolean, writable: boolean) => {
    if (!keys.some((k) => k.pubkey === pubkey)) keys.push({ pubkey, signer, writable });
  };
  add(feePayer, true, true);
  add(spec.from, true, false);
  add(source, false, true);
  add(destination, false, true);
  if (create) add(spec.toOwner, false, false);
  add(spec.mint, false, false);
  for (const r of spec.references ?? []) add(r, false, false);
  if (create) add(programs.system, false, false);
  add(programs.token, false, false);
  if (create) add(programs.ata, false, false);
  if (spec.memo !== undefined) add(programs.memo, false, false);
  return keys;
}

function logsOf(instructions: Instruction[], ok: boolean): { logs: string[]; units: number } {
  const logs: string[] = [];
  let units = 0;
  const budget = computeBudgetPerInstruction * instructions.length;
  for (const ix of instructions) {
    logs.push(`Program ${ix.programId} invoke [1]`);
    const kind = ix.parsed.program;
    const cost = kind === 'spl-associated-token-account' ? 21_990 : kind === 'spl-memo' ? 3_000 + ix.data.length * 50 : 6_200;
    if (kind === 'spl-associated-token-account') logs.push('Program log: Create');
    if (kind === 'spl-memo') logs.push(`Program log: Memo (len ${ix.data.length}): ${JSON.stringify(ix.data.toString('utf8'))}`);
    if (kind === 'spl-token') logs.push('Program log: Instruction: TransferChecked');
    logs.push(`Program ${ix.programId} consumed ${cost} of ${budget - units} compute units`);
    units += cost;
    if (kind === 'spl-token' && !ok) {
      logs.splice(logs.length - 1, 0, 'Program log: Error: insufficient funds');
      logs.push(`Program ${ix.programId} failed: custom program error: 0x1`);
      break;
    }
    logs.push(`Program ${ix.programId} success`);
  }
  return { logs, units };
}

/**
 * Runs a transfer against the ledger's accounts and returns the transaction record. Like the
 * runtime, a transfer the source cannot cover fails as a whole (the new token account is not
 * created either) but is still included, and its fee is still charged.
 */
export function executeTransfer(ledger: Ledger, spec: TransferSpec, signature: string, recentBlockhash: string, slot: number): LedgerTx {
  const decimals = ledger.mints.get(spec.mint);
  if (decimals === undefined) throw new Error(`unknown mint ${spec.mint}: addMint first`);
  const feePayer = spec.feePayer ?? spec.from;
  const source = associatedTokenAddress(spec.from, spec.mint);
  const destination = associatedTokenAddress(spec.toOwner, spec.mint);
  const sourceAccount = ledger.tokens.get(source);
  if (!sourceAccount) throw new Error(`${spec.from} holds no ${spec.mint}: fund it first`);
  const create = !ledger.tokens.has(destination);
  const keys = keysOf(spec, feePayer, source, destination, create);
  const instructions = instructionsOf(spec, feePayer, source, destination, decimals, create);
  const lamportsOf = (k: string) =>
    ledger.lamports.get(k) ??
    (Object.values(programs).includes(k as never) ? programLamports : ledger.mints.has(k) ? mintRent : ledger.tokens.has(k) ? tokenAccountRent : k === feePayer ? startingLamports : 0);
  const balanceOf = (address: string): TokenBalance | undefined => {
    const a = ledger.tokens.get(address);
    return a && { accountIndex: keys.findIndex((k) => k.pubkey === address), mint: a.mint, owner: a.owner, amount: a.amount, decimals };
  };
  const tokenAccounts = [...new Set([source, destination])];
  const preBalances = keys.map((k) => lamportsOf(k.pubkey));
  const preTokenBalances = tokenAccounts.map(balanceOf).filter((b) => b !== undefined);
  const ok = sourceAccount.amount >= spec.amount;
  const fee = lamportsPerSignature * keys.filter((k) => k.signer).length;
  const postBalances = [...preBalances];
  postBalances[0]! -= fee;
  if (ok) {
    if (create) {
      ledger.tokens.set(destination, { mint: spec.mint, owner: spec.toOwner, amount: 0n });
      postBalances[0]! -= tokenAccountRent;
      postBalances[keys.findIndex((k) => k.pubkey === destination)]! += tokenAccountRent;
    }
    sourceAccount.amount -= spec.amount;
    ledger.tokens.get(destination)!.amount += spec.amount;
  }
  keys.forEach((k, i) => ledger.lamports.set(k.pubkey, postBalances[i]!));
  const { logs, units } = logsOf(instructions, ok);
  return {
    signature,
    slot,
    blockTime: Math.floor(Date.now() / 1000),
    version: spec.version ?? 0,
    recentBlockhash,
    keys,
    instructions,
    err: ok ? null : { InstructionError: [instructions.length - 1, { Custom: 1 }] },
    fee,
    computeUnitsConsumed: units,
    preBalances,
    postBalances,
    preTokenBalances,
    postTokenBalances: tokenAccounts.map(balanceOf).filter((b) => b !== undefined),
    logMessages: logs,
    memos: spec.memo !== undefined ? [spec.memo] : [],
    spec,
  };
}
