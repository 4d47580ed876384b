import { afterAll, beforeAll, describe, expect, it } from '@jest/globals';
import { Connection, Keypair, PublicKey, SolanaJSONRPCError } from '@solana/web3.js';
import { associatedTokenAddress, randomBase58 } from '../../emulators/solana/ledger.js';
import { startSolanaEmulator, type SolanaEmulator } from '../../emulators/solana/server.js';

/**
 * The Solana RPC emulator read through the real `@solana/web3.js` client, whose response
 * validation rejects any shape that differs from what a node sends.
 */
let emu: SolanaEmulator;
let conn: Connection;
const key = () => Keypair.generate().publicKey.toBase58();
const mint = key();
const customer = key();

beforeAll(async () => {
  emu = await startSolanaEmulator();
  conn = new Connection(emu.url, 'confirmed');
  emu.ledger.addMint(mint, 6);
  emu.ledger.fund(customer, mint, 1_000_000_000n);
});
afterAll(() => emu?.close());

const rpc = async (body: unknown) => (await fetch(emu.url, { method: 'POST', headers: { 'content-type': 'application/json' }, body: JSON.stringify(body) })).json() as Promise<any>;
const sigs = async (ref: string, opts: { until?: string; before?: string; limit?: number } = {}, commitment: 'confirmed' | 'finalized' = 'confirmed') =>
  (await conn.getSignaturesForAddress(new PublicKey(ref), opts, commitment)).map((s) => s.signature);

describe('getSignaturesForAddress', () => {
  it('lists newest first and honours until, before and limit like the node', async () => {
    const ref = key();
    const [a, b, c, d] = [1n, 2n, 3n, 4n].map((n) => emu.ledger.submitTransfer({ from: customer, toOwner: key(), mint, amount: n, references: [ref] }));
    expect(await sigs(ref)).toEqual([d, c, b, a]);
    expect(await sigs(ref, { until: b })).toEqual([d, c]);
    expect(await sigs(ref, { before: c })).toEqual([b, a]);
    expect(await sigs(ref, { before: d, until: a })).toEqual([c, b]);
    expect(await sigs(ref, { limit: 2 })).toEqual([d, c]);
    const unknown = emu.ledger.submitTransfer({ from: customer, toOwner: key(), mint, amount: 1n });
    emu.ledger.dropSignature(unknown);
    expect(await sigs(ref, { until: unknown })).toEqual([d, c, b, a]);
    expect(await sigs(ref, { before: unknown })).toEqual([]);
  });

  it('hides confirmed transactions from a finalized query until their slot is rooted', async () => {
    const ref = key();
    const s = emu.ledger.submitTransfer({ from: customer, toOwner: key(), mint, amount: 5n, references: [ref], memo: 'pl_123' });
    expect(await sigs(ref, {}, 'finalized')).toEqual([]);
    const [info] = await conn.getSignaturesForAddress(new PublicKey(ref), {}, 'confirmed');
    expect(info).toMatchObject({ signature: s, err: null, memo: '[6] pl_123', confirmationStatus: 'confirmed' });
    emu.ledger.finalize(s);
    expect(await sigs(ref, {}, 'finalized')).toEqual([s]);
  });

  it('refuses a limit above 1000 and commitment processed', async () => {
    const res = await rpc({ jsonrpc: '2.0', id: 'x1', method: 'getSignaturesForAddress', params: [key(), { limit: 1001 }] });
    expect(res).toEqual({ jsonrpc: '2.0', id: 'x1', error: { code: -32602, message: 'Invalid limit; max 1000' } });
    const low = await rpc({ jsonrpc: '2.0', id: 2, method: 'getSignaturesForAddress', params: [key(), { commitment: 'processed' }] });
    expect(low.error.message).toBe('Method does not support commitment below `confirmed`');
  });
});

describe('getTransaction (jsonParsed)', () => {
  it('shows a transfer that creates the recipient token account: no pre entry, reference among the keys', async () => {
    const merchant = key();
    const ref = key();
    const s = emu.ledger.submitTransfer({ from: customer, toOwner: merchant, mint, amount: 12_340_000n, references: [ref] });
    const tx = (await conn.getParsedTransaction(s, { commitment: 'confirmed', maxSupportedTransactionVersion: 0 }))!;
    expect(tx.version).toBe(0);
    expect(tx.meta!.err).toBeNull();
    const keys = tx.transaction.message.accountKeys.map((k) => k.pubkey.toBase58());
    expect(keys[0]).toBe(customer);
    expect(keys).toContain(ref);
    const dest = keys.indexOf(associatedTokenAddress(merchant, mint));
    expect(tx.meta!.preTokenBalances!.find((b) => b.accountIndex === dest)).toBeUndefined();
    expect(tx.meta!.postTokenBalances!.find((b) => b.accountIndex === dest)).toMatchObject({
      mint,
      owner: merchant,
      uiTokenAmount: { amount: '12340000', decimals: 6, uiAmount: 12.34, uiAmountString: '12.34' },
    });
    const transfer = tx.transaction.message.instructions.at(-1) as { program: string; parsed: { type: string; info: Record<string, unknown> } };
    expect(transfer.program).toBe('spl-token');
    expect(transfer.parsed).toMatchObject({ type: 'transferChecked', info: { multisigAuthority: customer, signers: [ref] } });
  });

  it('answers null for unknown, not-yet-finalized (at finalized) and dropped signatures', async () => {
    expect(await conn.getParsedTransaction(randomBase58(64), { commitment: 'confirmed', maxSupportedTransactionVersion: 0 })).toBeNull();
    const s = emu.ledger.submitTransfer({ from: customer, toOwner: key(), mint, amount: 1n });
    expect(await conn.getParsedTransaction(s, { commitment: 'finalized', maxSupportedTransactionVersion: 0 })).toBeNull();
    emu.ledger.dropSignature(s);
    expect(await conn.getParsedTransaction(s, { commitment: 'confirmed', maxSupportedTransactionVersion: 0 })).toBeNull();
    const malformed = await rpc({ jsonrpc: '2.0', id: 3, method: 'getTransaction', params: [key(), { commitment: 'confirmed' }] });
    expect(malformed.error).toEqual({ code: -32602, message: 'Invalid param: WrongSize' });
  });

  it('refuses a version 0 transaction to a client that does not declare support, and serves legacy ones', async () => {
    const v0 = emu.ledger.submitTransfer({ from: customer, toOwner: key(), mint, amount: 1n });
    const err = await conn.getParsedTransaction(v0, 'confirmed').catch((e) => e);
    expect(err).toBeInstanceOf(SolanaJSONRPCError);
    expect((err as SolanaJSONRPCError).code).toBe(-32015);
    const legacy = emu.ledger.submitTransfer({ from: customer, toOwner: key(), mint, amount: 1n, version: 'legacy' });
    const tx = await conn.getParsedTransaction(legacy, 'confirmed');
    expect(tx!.version).toBeUndefined();
  });

  it('records a transfer the source cannot cover as a failed transaction that moves no tokens', async () => {
    const poor = key();
    emu.ledger.fund(poor, mint, 3n);
    const s = emu.ledger.submitTransfer({ from: poor, toOwner: key(), mint, amount: 4n });
    const tx = (await conn.getParsedTransaction(s, { commitment: 'confirmed', maxSupportedTransactionVersion: 0 }))!;
    expect(tx.meta!.err).toEqual({ InstructionError: [1, { Custom: 1 }] });
    expect(tx.meta!.postTokenBalances).toEqual(tx.meta!.preTokenBalances);
    expect(tx.meta!.logMessages).toContain('Program TokenkegQfeZyiNwAJbNbGKPFXCWuBvf9Ss623VQ5DA failed: custom program error: 0x1');
  });
});

describe('getSignatureStatuses and getSlot', () => {
  it('tracks confirmations, finality, abandoned forks and re-inclusion', async () => {
    const s = emu.ledger.submitTransfer({ from: customer, toOwner: key(), mint, amount: 1n });
    emu.ledger.advanceSlots(3);
    let [st] = (await conn.getSignatureStatuses([s], { searchTransactionHistory: true })).value;
    expect(st).toMatchObject({ confirmationStatus: 'confirmed', confirmations: 3, err: null });
    emu.ledger.dropSignature(s);
    expect((await conn.getSignatureStatuses([s], { searchTransactionHistory: true })).value).toEqual([null]);
    const tip = await conn.getSlot('confirmed');
    emu.ledger.reinclude(s);
    [st] = (await conn.getSignatureStatuses([s])).value;
    expect(st!.slot).toBe(tip + 1);
    emu.ledger.finalize(s);
    [st] = (await conn.getSignatureStatuses([s])).value;
    expect(st).toMatchObject({ confirmationStatus: 'finalized', confirmations: null });
    expect(await conn.getSlot('finalized')).toBe(st!.slot);
    expect(() => emu.ledger.dropSignature(s)).toThrow(/finalized/);
  });

  it('speaks JSON-RPC 2.0: ids echoed, batches, unknown methods and bad JSON', async () => {
    expect(await rpc([{ jsonrpc: '2.0', id: 7, method: 'getHealth' }, { jsonrpc: '2.0', id: 8, method: 'nope' }])).toEqual([
      { jsonrpc: '2.0', id: 7, result: 'ok' },
      { jsonrpc: '2.0', id: 8, error: { code: -32601, message: 'Method not found' } },
    ]);
    const bad = await (await fetch(emu.url, { method: 'POST', body: '{' })).json();
    expect(bad).toEqual({ jsonrpc: '2.0', id: null, error: { code: -32700, message: 'Parse error' } });
    expect(emu.calls.getSignatureStatuses).toBeGreaterThan(0);
  });
});
