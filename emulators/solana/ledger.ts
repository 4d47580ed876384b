import { executeTransfer } from './transfer.js';
import { associatedTokenAddress, randomBase58, type Commitment, type LedgerTx, type TokenAccount, type TransferSpec } from './types.js';

export * from './types.js';

/**
 * The emulated cluster's state: token accounts, lamports and the transactions of one fork. Slots
 * move forward only. Every transaction lands in a slot of its own and is at once `confirmed`; the
 * root (the `finalized` slot) moves when the test says so. A dropped transaction is one whose
 * fork the cluster abandoned: it disappears from every answer and its effects are undone.
 */
export class Ledger {
  tip = 1_000;
  root = 1_000;
  readonly mints = new Map<string, number>();
  readonly tokens = new Map<string, TokenAccount>();
  readonly lamports = new Map<string, number>();
  private readonly txs = new Map<string, LedgerTx>();
  private readonly dropped = new Map<string, LedgerTx>();

  addMint(mint: string, decimals = 6): void {
    this.mints.set(mint, decimals);
  }

  /** Gives `owner` an associated token account of `mint` holding `amount` (outside any transaction, like a genesis balance). */
  fund(owner: string, mint: string, amount: bigint): string {
    if (!this.mints.has(mint)) throw new Error(`unknown mint ${mint}: addMint first`);
    const address = associatedTokenAddress(owner, mint);
    const account = this.tokens.get(address) ?? { mint, owner, amount: 0n };
    account.amount += amount;
    this.tokens.set(address, account);
    return address;
  }

  /** Sends a transfer; it lands, confirmed, in the next slot. A transfer the source cannot cover lands as a failed transaction, as on chain. */
  submitTransfer(spec: TransferSpec): string {
    const tx = executeTransfer(this, spec, randomBase58(64), randomBase58(32), this.tip + 1);
    this.tip = tx.slot;
    this.txs.set(tx.signature, tx);
    return tx.signature;
  }

  /** Empty slots pass (no transaction lands in them). */
  advanceSlots(n: number): void {
    this.tip += n;
  }

  /** Roots the slot of `signature` (and with it every earlier slot), or the tip when no signature is given. */
  finalize(signature?: string): void {
    const slot = signature === undefined ? this.tip : this.get(signature, 'confirmed')?.slot;
    if (slot === undefined) throw new Error(`unknown signature ${signature}`);
    this.root = Math.max(this.root, slot);
  }

  /** The fork holding this transaction is abandoned and the cluster goes on one slot later on another fork. */
  dropSignature(signature: string): void {
    const tx = this.txs.get(signature);
    if (!tx) throw new Error(`unknown signature ${signature}`);
    if (tx.slot <= this.root) throw new Error(`${signature} is finalized and can no longer be dropped`);
    this.undo(tx);
    this.txs.delete(signature);
    this.dropped.set(signature, tx);
    this.tip += 1;
  }

  /** A dropped transaction lands again in the next slot (its blockhash is still valid), with the same signature. */
  reinclude(signature: string): void {
    const old = this.dropped.get(signature);
    if (!old) throw new Error(`${signature} was not dropped`);
    this.dropped.delete(signature);
    const tx = executeTransfer(this, old.spec, signature, old.recentBlockhash, this.tip + 1);
    this.tip = tx.slot;
    this.txs.set(signature, tx);
  }

  slotAt(commitment: Commitment): number {
    return commitment === 'finalized' ? this.root : this.tip;
  }

  /** A transaction visible at the commitment, or undefined. */
  get(signature: string, commitment: Commitment): LedgerTx | undefined {
    const tx = this.txs.get(signature);
    return tx && tx.slot <= this.slotAt(commitment) ? tx : undefined;
  }

  /** Transactions naming `address` among their account keys, newest first, visible at the commitment. */
  history(address: string, commitment: Commitment): LedgerTx[] {
    const limit = this.slotAt(commitment);
    return [...this.txs.values()].filter((tx) => tx.slot <= limit && tx.keys.some((k) => k.pubkey === address)).sort((a, b) => b.slot - a.slot);
  }

  /** Takes back what the transaction changed (by difference, so later transactions keep their own effects). */
  private undo(tx: LedgerTx): void {
    if (tx.err === null) {
      for (const post of tx.postTokenBalances) {
        const pre = tx.preTokenBalances.find((p) => p.accountIndex === post.accountIndex);
        const address = tx.keys[post.accountIndex]!.pubkey;
        const account = this.tokens.get(address)!;
        account.amount -= post.amount - (pre?.amount ?? 0n);
        if (!pre && account.amount === 0n) this.tokens.delete(address);
      }
    }
    tx.keys.forEach((k, i) => this.lamports.set(k.pubkey, (this.lamports.get(k.pubkey) ?? 0) - (tx.postBalances[i]! - tx.preBalances[i]!)));
  }
}
