import { randomBytes } from 'node:crypto';
import bs58 from 'bs58';

/** The USDT mint on Solana mainnet; test environments may override it (USDT_CONTRACT_USDT_SOL_TEST). */
export const solanaUsdtMint = 'Es9vMFrzaCERmJfrF4H2FYD4KCoNkY11McCe8BenwNYB';

/**
 * A unique Solana Pay reference: 32 random bytes in base58. The wallet adds it as a read-only
 * account to the transfer, so the watcher finds the payment with getSignaturesForAddress.
 */
export function newSolanaReference(): string {
  return bs58.encode(randomBytes(32));
}

/** `solana:<recipient>?amount=…&spl-token=<mint>&reference=…&label=…&memo=…` (Solana Pay transfer request). */
export function solanaPayUrl(p: { recipient: string; amount: string; reference: string; label: string | null; linkId: string; mint?: string }): string {
  const q = new URLSearchParams({ amount: p.amount, 'spl-token': p.mint ?? solanaUsdtMint, reference: p.reference });
  if (p.label) q.set('label', p.label.slice(0, 64));
  q.set('memo', p.linkId);
  return `solana:${p.recipient}?${q.toString()}`;
}
