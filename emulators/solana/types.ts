// Shapes shared by the emulated ledger, its transfers and its RPC renderings.
import { randomBytes } from 'node:crypto';
import { PublicKey } from '@solana/web3.js';
import bs58 from 'bs58';

export type Commitment = 'processed' | 'confirmed' | 'finalized';

export const programs = {
  system: '11111111111111111111111111111111',
  token: 'TokenkegQfeZyiNwAJbNbGKPFXCWuBvf9Ss623VQ5DA',
  ata: 'ATokenGPvbdGVxr1b2hvZbsiqW5xWH25efTNsLJA8knL',
  memo: 'MemoSq4gqABAXKb96qnH8TysNcWxMyWCqXgDLGmfcHr',
} as const;

export interface AccountKey {
  pubkey: string;
  signer: boolean;
  writable: boolean;
}

export interface Instruction {
  programId: string;
  accounts: string[];
  data: Buffer;
  /** What the node's jsonParsed encoding shows for this program's instruction. */
  parsed: { program: string; parsed: unknown };
}

export interface TokenBalance {
  accountIndex: number;
  mint: string;
  owner: string;
  amount: bigint;
  decimals: number;
}

/** A transaction as the ledger keeps it; render.ts turns it into the RPC's encodings. */
export interface LedgerTx {
  signature: string;
  slot: number;
  blockTime: number;
  version: 0 | 'legacy';
  recentBlockhash: string;
  keys: AccountKey[];
  instructions: Instruction[];
  err: unknown;
  fee: number;
  computeUnitsConsumed: number;
  preBalances: number[];
  postBalances: number[];
  preTokenBalances: TokenBalance[];
  postTokenBalances: TokenBalance[];
  logMessages: string[];
  memos: string[];
  spec: TransferSpec;
}

export interface TokenAccount {
  mint: string;
  owner: string;
  amount: bigint;
}

/** The account that holds `owner`'s tokens of `mint`: the real associated-token-account derivation. */
export function associatedTokenAddress(owner: string, mint: string): string {
  return PublicKey.findProgramAddressSync(
    [new PublicKey(owner).toBuffer(), new PublicKey(programs.token).toBuffer(), new PublicKey(mint).toBuffer()],
    new PublicKey(programs.ata),
  )[0].toBase58();
}

export const randomBase58 = (bytes: number): string => bs58.encode(randomBytes(bytes));

/** A token transfer as a wallet builds it from a Solana Pay transfer request (SPEC.md). */
export interface TransferSpec {
  /** The paying wallet: owner of the source token account, signs the transfer. */
  from: string;
  /** The receiving wallet; its associated token account is paid, and created in the same transaction if missing. */
  toOwner: string;
  mint: string;
  amount: bigint;
  /** Solana Pay references: read-only, non-signer keys appended to the transfer instruction. */
  references?: string[];
  /** An SPL Memo instruction just before the transfer (Solana Pay `memo`). */
  memo?: string;
  /** Who pays the fee (and a new token account's rent); `from` unless a relayer pays. */
  feePayer?: string;
  version?: 0 | 'legacy';
}
