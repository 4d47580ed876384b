import { PublicKey } from '@solana/web3.js';
import bs58 from 'bs58';

/**
 * Validation of a Solana wallet address a merchant connects. Payments go to the wallet's
 * associated token account, which wallets derive from the owner address; an ATA or any other
 * program-derived address is off the ed25519 curve, and a transfer aimed at its own ATA would be
 * lost, so only on-curve (keypair) addresses are accepted.
 */
export class SolanaAddressError extends Error {
  constructor(message: string) {
    super(message);
    this.name = 'SolanaAddressError';
  }
}

const hint = 'Connect the address your Solana wallet shows for receiving SOL (your wallet address, not a token account).';

export function validateSolanaWallet(input: string): string {
  const value = input.trim();
  if (value === '') throw new SolanaAddressError(`The address is empty. ${hint}`);
  let raw: Uint8Array;
  try {
    raw = bs58.decode(value);
  } catch {
    throw new SolanaAddressError(`Not a Solana address: it is not valid base58 (letters 0, O, I and l never appear). ${hint}`);
  }
  if (raw.length !== 32) {
    throw new SolanaAddressError(`Not a Solana address: it decodes to ${raw.length} bytes, not 32. ${hint}`);
  }
  if (!PublicKey.isOnCurve(raw)) {
    throw new SolanaAddressError(
      `This address is off the ed25519 curve: it is a program-derived address such as a token account (ATA), which cannot be a wallet. ${hint}`,
    );
  }
  // Re-encoding gives the canonical spelling (no leading-zero ambiguity).
  return new PublicKey(raw).toBase58();
}
