import type { ParsedTransactionWithMeta, TokenBalance } from '@solana/web3.js';

/** What one Solana transaction paid a wallet in one mint, in the token's smallest unit. */
export interface TokenCredit {
  creditMinor: bigint;
  decimals: number;
  /** Whoever paid: the owner whose balance of the mint went down, else the fee payer. */
  payer: string | null;
}

type Tx = Pick<ParsedTransactionWithMeta, 'meta' | 'transaction'>;

/** Net change per owner of `mint` across the transaction's token balances (post − pre). */
function netByOwner(pre: readonly TokenBalance[], post: readonly TokenBalance[], mint: string): Map<string, bigint> {
  const net = new Map<string, bigint>();
  const add = (b: TokenBalance, sign: 1n | -1n) => {
    if (b.mint !== mint || !b.owner) return;
    net.set(b.owner, (net.get(b.owner) ?? 0n) + sign * BigInt(b.uiTokenAmount.amount));
  };
  for (const b of post) add(b, 1n);
  for (const b of pre) add(b, -1n);
  return net;
}

function feePayer(tx: Tx): string | null {
  const first = tx.transaction.message.accountKeys.find((k) => k.signer) ?? tx.transaction.message.accountKeys[0];
  return first ? first.pubkey.toBase58() : null;
}

/**
 * The credit of `recipient` in `mint`: the sum of its post token balances minus the sum of its
 * pre token balances, over every token account it owns in the transaction. This is how the node
 * itself reports balance changes, so it counts a plain `transfer`, a `transferChecked`, a
 * Token-2022 transfer or a transfer routed through another program alike. A token account
 * created in the same transaction (the customer's wallet opening the merchant's associated
 * token account) has no pre entry and counts from zero. A failed transaction (`meta.err`) moves
 * nothing and credits nothing; a transaction without metadata cannot be judged and credits
 * nothing either.
 *
 * The payer is the owner whose balance of the mint fell the most. The fee payer is only a
 * fallback: a relayer or the merchant may pay fees for the customer (Solana Pay transaction
 * requests), and then the fee payer is not who sent the money.
 */
export function tokenCredit(tx: Tx, mint: string, recipient: string, defaultDecimals = 6): TokenCredit {
  const meta = tx.meta;
  if (!meta || meta.err !== null) return { creditMinor: 0n, decimals: defaultDecimals, payer: null };
  const pre = meta.preTokenBalances ?? [];
  const post = meta.postTokenBalances ?? [];
  const net = netByOwner(pre, post, mint);
  const decimals = [...post, ...pre].find((b) => b.mint === mint)?.uiTokenAmount.decimals ?? defaultDecimals;
  let payer: string | null = null;
  let lowest = 0n;
  for (const [owner, change] of net) {
    if (owner !== recipient && change < lowest) [payer, lowest] = [owner, change];
  }
  return { creditMinor: net.get(recipient) ?? 0n, decimals, payer: payer ?? feePayer(tx) };
}
