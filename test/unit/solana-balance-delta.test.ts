import { describe, expect, it } from '@jest/globals';
import { Keypair, PublicKey, type ParsedTransactionWithMeta, type TokenBalance } from '@solana/web3.js';
import { tokenCredit } from '../../rails/solana/balance-delta.js';

const usdt = 'Es9vMFrzaCERmJfrF4H2FYD4KCoNkY11McCe8BenwNYB';
const other = Keypair.generate().publicKey.toBase58();
const merchant = Keypair.generate().publicKey.toBase58();
const customer = Keypair.generate().publicKey.toBase58();
const relayer = Keypair.generate().publicKey.toBase58();

const bal = (accountIndex: number, owner: string, amount: string, mint = usdt, decimals = 6): TokenBalance => ({
  accountIndex,
  mint,
  owner,
  programId: 'TokenkegQfeZyiNwAJbNbGKPFXCWuBvf9Ss623VQ5DA',
  uiTokenAmount: { amount, decimals, uiAmount: null, uiAmountString: '' },
});

function tx(pre: TokenBalance[], post: TokenBalance[], opts: { err?: unknown; feePayer?: string; noMeta?: boolean } = {}) {
  const keys = [opts.feePayer ?? customer, customer].map((k, i) => ({ pubkey: new PublicKey(k), signer: true, writable: i === 0 }));
  return {
    transaction: { signatures: ['x'], message: { accountKeys: keys, instructions: [], recentBlockhash: 'x' } },
    meta: opts.noMeta ? null : { err: opts.err ?? null, fee: 5000, preBalances: [], postBalances: [], preTokenBalances: pre, postTokenBalances: post },
  } as unknown as Pick<ParsedTransactionWithMeta, 'meta' | 'transaction'>;
}

describe('tokenCredit', () => {
  it('credits post − pre of the recipient in the mint, and names the sender', () => {
    const t = tx([bal(1, customer, '50000000'), bal(2, merchant, '1000000')], [bal(1, customer, '40000000'), bal(2, merchant, '11000000')]);
    expect(tokenCredit(t, usdt, merchant)).toEqual({ creditMinor: 10_000_000n, decimals: 6, payer: customer });
  });

  it('counts a token account created in the same transaction (no pre entry) from zero', () => {
    const t = tx([bal(1, customer, '5000000')], [bal(1, customer, '0'), bal(2, merchant, '5000000')]);
    expect(tokenCredit(t, usdt, merchant).creditMinor).toBe(5_000_000n);
  });

  it('ignores other mints and other owners', () => {
    const t = tx(
      [bal(1, customer, '9', other), bal(2, merchant, '0', other), bal(3, customer, '7000000')],
      [bal(1, customer, '0', other), bal(2, merchant, '9', other), bal(3, customer, '0'), bal(4, relayer, '7000000')],
    );
    expect(tokenCredit(t, usdt, merchant).creditMinor).toBe(0n);
  });

  it('credits nothing for a failed transaction or one without metadata', () => {
    const pre = [bal(1, customer, '5'), bal(2, merchant, '0')];
    const post = [bal(1, customer, '0'), bal(2, merchant, '5')];
    expect(tokenCredit(tx(pre, post, { err: { InstructionError: [0, { Custom: 1 }] } }), usdt, merchant).creditMinor).toBe(0n);
    expect(tokenCredit(tx(pre, post, { noMeta: true }), usdt, merchant).creditMinor).toBe(0n);
  });

  it('reports a negative change as such (the caller ignores non-positive credits)', () => {
    const t = tx([bal(2, merchant, '9000000')], [bal(2, merchant, '4000000'), bal(3, customer, '5000000')]);
    expect(tokenCredit(t, usdt, merchant).creditMinor).toBe(-5_000_000n);
  });

  it('sums several token accounts of the recipient (an ATA and an auxiliary account)', () => {
    const t = tx([bal(1, customer, '10'), bal(2, merchant, '1'), bal(3, merchant, '0')], [bal(1, customer, '0'), bal(2, merchant, '5'), bal(3, merchant, '6')]);
    expect(tokenCredit(t, usdt, merchant).creditMinor).toBe(10n);
  });

  it('names the debited owner, not the fee payer, when a relayer pays the fee', () => {
    const t = tx([bal(1, customer, '3'), bal(2, merchant, '0')], [bal(1, customer, '0'), bal(2, merchant, '3')], { feePayer: relayer });
    expect(tokenCredit(t, usdt, merchant).payer).toBe(customer);
  });

  it('falls back to the fee payer when no one else lost tokens of the mint', () => {
    const t = tx([], [bal(2, merchant, '3')], { feePayer: relayer });
    expect(tokenCredit(t, usdt, merchant)).toMatchObject({ creditMinor: 3n, payer: relayer });
  });

  it('handles amounts beyond 2^53 exactly and takes decimals from the balances', () => {
    const t = tx([bal(2, merchant, '0', usdt, 9)], [bal(2, merchant, '18446744073709551615', usdt, 9)]);
    expect(tokenCredit(t, usdt, merchant)).toMatchObject({ creditMinor: 18_446_744_073_709_551_615n, decimals: 9 });
  });
});
