import { describe, expect, it } from '@jest/globals';
import { Keypair, PublicKey } from '@solana/web3.js';
import { SolanaAddressError, validateSolanaWallet } from '../../rails/solana/wallet-address.js';

// research/chains.md §1 (two implementations): the abandon…about wallet m/44'/501'/0'/0' and its USDT ATA.
const abandonWallet = 'HAgk14JpMQLgt6rVgv7cBQFJWFto5Dqxi472uT3DKpqk';
const abandonUsdtAta = '6pXYguUixhfdydHDMgsvSy3sAWjStL2eEYh4KeYJAUDk';

function refusal(input: string): string {
  try {
    validateSolanaWallet(input);
  } catch (err) {
    expect(err).toBeInstanceOf(SolanaAddressError);
    return (err as Error).message;
  }
  throw new Error(`accepted: ${input}`);
}

describe('Solana wallet address validation', () => {
  it('accepts a wallet address, trimmed', () => {
    expect(validateSolanaWallet(` ${abandonWallet}\n`)).toBe(abandonWallet);
  });

  it('accepts keypair addresses (on the ed25519 curve)', () => {
    for (let i = 0; i < 200; i++) {
      const address = Keypair.generate().publicKey.toBase58();
      expect(validateSolanaWallet(address)).toBe(address);
    }
  });

  it('refuses a token account (ATA) and other program-derived addresses', () => {
    expect(refusal(abandonUsdtAta)).toMatch(/off the ed25519 curve: it is a program-derived address such as a token account \(ATA\)/);
    const programId = new PublicKey('TokenkegQfeZyiNwAJbNbGKPFXCWuBvf9Ss623VQ5DA');
    for (let i = 0; i < 20; i++) {
      const [pda] = PublicKey.findProgramAddressSync([Buffer.from(`seed-${i}`)], programId);
      expect(refusal(pda.toBase58())).toMatch(/off the ed25519 curve/);
    }
  });

  it('refuses what is not a Solana address, saying what it is', () => {
    expect(refusal('')).toMatch(/The address is empty/);
    expect(refusal('0x9858EfFD232B4033E47d90003D41EC34EcaEda94')).toMatch(/not valid base58/);
    expect(refusal('TUEZSdKsoDHQMeZwihtdoBiN46zxhGWYdH')).toMatch(/decodes to 25 bytes, not 32/);
    expect(refusal(abandonWallet.slice(0, 30))).toMatch(/decodes to \d+ bytes, not 32/);
    expect(refusal(`${abandonWallet}1`)).toMatch(/decodes to 33 bytes, not 32/);
    expect(refusal('HAgk14JpMQLgt6rVgv7cBQFJ Wto5Dqxi472uT3DKpqk')).toMatch(/not valid base58/);
  });
});
