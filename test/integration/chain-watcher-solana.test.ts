import { afterAll, beforeAll, describe, expect, it } from '@jest/globals';
import { Connection, Keypair } from '@solana/web3.js';
import { sql } from 'slonik';
import { z } from 'zod';
import type { CreatedStore } from '../../db/store-repo.js';
import { readReference, type ReferenceProgress } from '../../rails/solana/read-reference.js';
import { associatedTokenAddress } from '../../emulators/solana/ledger.js';
import { startSolanaEmulator, type SolanaEmulator } from '../../emulators/solana/server.js';
import { startStack, type Stack } from '../helpers/stack.js';
import { eventually } from '../helpers/wait.js';

/**
 * The Solana path end to end: links carry a Solana Pay reference, a customer's wallet pays the
 * merchant's wallet naming that reference, the watcher finds it through the emulated RPC node
 * and the link's workflow confirms once the cluster finalizes. Watchers, workflows and
 * PostgreSQL are the real ones; only the Solana node is emulated.
 */
let emu: SolanaEmulator;
let stack: Stack;
const usd = (n: number) => BigInt(n) * 1_000_000n;
const wallet = () => Keypair.generate().publicKey.toBase58();
const mint = wallet();
const customer = wallet();

async function storeWithSolanaWallet(name: string, solanaWallet: string) {
  const store = await stack.createStore(name);
  await stack.pool.query(sql.unsafe`INSERT INTO store_wallets (store_id, environment, kind, public_key)
    VALUES (${store.clientId}, 'test', 'solana', ${solanaWallet})`);
  return store;
}

let store: CreatedStore;
let merchant: string;

beforeAll(async () => {
  emu = await startSolanaEmulator();
  emu.ledger.addMint(mint, 6);
  emu.ledger.fund(customer, mint, usd(1_000_000));
  stack = await startStack({ CHAIN_WATCHERS: 'on', CHAIN_POLL_MS: '100', RPC_URL_USDT_SOL_TEST: emu.url, USDT_CONTRACT_USDT_SOL_TEST: mint });
  merchant = wallet();
  emu.ledger.fund(merchant, mint, 0n); // the merchant's token account exists already
  store = await storeWithSolanaWallet('Solana shop', merchant);
}, 120_000);
afterAll(async () => {
  await stack?.stop();
  await emu?.close();
});

const getLink = async (id: string, key = store.keys.test.secretKey) => (await stack.request({ method: 'GET', url: `/v1/payment-links/${id}`, key })).body;
const until = (id: string, check: (l: any) => boolean, what: string, key?: string) =>
  eventually(async () => {
    const l = await getLink(id, key);
    return check(l) ? l : undefined;
  }, what, 30_000);

async function createLink(usdtAmount: string, key = store.keys.test.secretKey) {
  const res = await stack.request({ method: 'POST', url: '/v1/payment-links', key, payload: { usdtAmount, enabledRails: ['USDT_SOL'] } });
  expect(res.status).toBe(201);
  return res.body;
}

const pay = (link: { solanaReference: string; solanaAddress: string; id: string }, amount: bigint, extra: Partial<Parameters<SolanaEmulator['ledger']['submitTransfer']>[0]> = {}) =>
  emu.ledger.submitTransfer({ from: customer, toOwner: link.solanaAddress, mint, amount, references: [link.solanaReference], memo: link.id, ...extra });

const depositState = (signature: string) =>
  stack.pool.maybeOneFirst(sql.type(z.object({ state: z.string() }))`SELECT state FROM chain_deposits WHERE rail = 'USDT_SOL' AND tx_hash = ${signature}`);

describe('Solana watcher', () => {
  it('shows a referenced payment as PROCESSING at once and CONFIRMED when finalized, with signature and payer', async () => {
    const link = await createLink('10');
    expect(link).toMatchObject({ solanaAddress: merchant, status: 'PENDING' });
    expect(link.solanaPayUrl).toContain(`reference=${link.solanaReference}`);
    const sig = pay(link, usd(10));
    const seen = await until(link.id, (l) => l.status === 'PROCESSING', 'PROCESSING');
    expect(seen.payments[0]).toMatchObject({ rail: 'USDT_SOL', externalId: sig, state: 'seen', amount: '10', payer: customer });
    emu.ledger.finalize(sig);
    const done = await until(link.id, (l) => l.status === 'CONFIRMED', 'CONFIRMED');
    expect(done).toMatchObject({ confirmedRail: 'USDT_SOL', externalId: sig, payer: customer, amountReceived: '10' });
  });

  it('ignores other mints, other recipients, failed and unreferenced transfers; adds up partial payments', async () => {
    const link = await createLink('3');
    const fakeMint = wallet();
    emu.ledger.addMint(fakeMint, 6);
    emu.ledger.fund(customer, fakeMint, usd(100));
    const poor = wallet();
    emu.ledger.fund(poor, mint, 1n);
    pay(link, usd(3), { mint: fakeMint });
    pay(link, usd(3), { toOwner: wallet() });
    pay(link, usd(3), { from: poor }); // lands as a failed transaction: the source holds 1 unit
    pay(link, usd(3), { references: [] }); // the honest limitation: without the reference it is not found
    const first = pay(link, usd(1));
    emu.ledger.finalize(first);
    // The amount is written before the link leaves PROCESSING: wait for it to settle.
    const partial = await until(link.id, (l) => l.amountReceived === '1' && l.status !== 'PROCESSING', 'one USDT received, settled');
    expect(partial.status).toBe('PENDING');
    expect(partial.payments).toHaveLength(1);
    const second = pay(link, usd(2));
    emu.ledger.finalize(second);
    const done = await until(link.id, (l) => l.status === 'CONFIRMED', 'CONFIRMED');
    expect(done.amountReceived).toBe('3');
    expect(done.externalId).toBe(second);
  });

  it('credits a payment that creates the merchant token account in the same transaction', async () => {
    const fresh = wallet();
    const other = await storeWithSolanaWallet('Fresh wallet shop', fresh);
    const key = other.keys.test.secretKey;
    const link = await createLink('4', key);
    const sig = pay(link, usd(4));
    const tx = await new Connection(emu.url).getParsedTransaction(sig, { commitment: 'confirmed', maxSupportedTransactionVersion: 0 });
    const ata = tx!.transaction.message.accountKeys.findIndex((k) => k.pubkey.toBase58() === associatedTokenAddress(fresh, mint));
    expect(tx!.meta!.preTokenBalances!.some((b) => b.accountIndex === ata)).toBe(false);
    emu.ledger.finalize(sig);
    const done = await until(link.id, (l) => l.status === 'CONFIRMED', 'CONFIRMED', key);
    expect(done).toMatchObject({ amountReceived: '4', externalId: sig, payer: customer });
  });

  it('keeps a payment whose fork is in doubt, drops it once the cluster finalized past it, and confirms it when it lands again', async () => {
    const link = await createLink('5');
    const sig = pay(link, usd(5));
    await until(link.id, (l) => l.status === 'PROCESSING', 'PROCESSING');
    emu.ledger.dropSignature(sig);
    // Two full settle passes with the signature unknown but the root not past its slot: still seen.
    const passes = emu.calls.getSignatureStatuses ?? 0;
    await eventually(async () => ((emu.calls.getSignatureStatuses ?? 0) >= passes + 2 ? true : undefined), 'two settle passes');
    expect(await depositState(sig)).toBe('seen');
    emu.ledger.finalize();
    const back = await until(link.id, (l) => l.status === 'PENDING', 'PENDING after the fork was abandoned');
    expect(back.payments).toHaveLength(1);
    expect(back.payments[0]).toMatchObject({ state: 'dropped' });
    emu.ledger.reinclude(sig);
    emu.ledger.finalize(sig);
    const done = await until(link.id, (l) => l.status === 'CONFIRMED', 'CONFIRMED after re-inclusion');
    expect(done.externalId).toBe(sig);
  });

  it('loses nothing when the workers restart between two payments', async () => {
    const link = await createLink('7');
    const first = pay(link, usd(3));
    await until(link.id, (l) => l.status === 'PROCESSING', 'PROCESSING');
    let second = '';
    await stack.restartWorkers(async () => {
      second = pay(link, usd(4));
      emu.ledger.finalize();
    });
    const done = await until(link.id, (l) => l.status === 'CONFIRMED', 'CONFIRMED after restart');
    expect(done.amountReceived).toBe('7');
    expect(done.payments.map((p: { externalId: string }) => p.externalId).sort()).toEqual([first, second].sort());
  });

  it('takes a SOL invoice whose safe shape carries the Solana Pay request, finds its payment by reference and marks it PAID', async () => {
    const res = await stack.request({ method: 'POST', url: '/v1/invoices', key: store.keys.test.secretKey, payload: { amount: '2', network: 'SOL' } });
    expect(res.status).toBe(201);
    const inv = res.body;
    expect(Object.keys(inv)).toHaveLength(13);
    expect(inv).toMatchObject({ network: 'SOL', status: 'PENDING', amount: '2.000000' });
    const url = new URL(inv.paymentAddress);
    expect(url.protocol).toBe('solana:');
    expect(url.pathname).toBe(merchant);
    expect(Object.fromEntries(url.searchParams)).toEqual({ amount: '2.000000', 'spl-token': mint, reference: expect.any(String), memo: inv.id });
    expect(inv.paymentAddress).not.toContain('Solana shop');
    const reference = url.searchParams.get('reference')!;
    // Another invoice paying the same wallet without this reference is not this invoice's payment.
    pay({ solanaReference: wallet(), solanaAddress: merchant, id: 'other' }, usd(2));
    const sig = pay({ solanaReference: reference, solanaAddress: merchant, id: inv.id }, usd(2));
    const lookup = async () => (await stack.request({ method: 'GET', url: `/v1/invoices/${inv.id}` })).body;
    const seen = await eventually(async () => ((await lookup()).status === 'CONFIRMING' ? lookup() : undefined), 'CONFIRMING', 30_000);
    expect(seen.txHash).toBe(sig);
    emu.ledger.finalize(sig);
    const paid = await eventually(async () => {
      const v = await lookup();
      return v.status === 'PAID' ? v : undefined;
    }, 'PAID', 30_000);
    expect(paid).toMatchObject({ status: 'PAID', txHash: sig, paymentAddress: inv.paymentAddress, simulated: false });
  });

  it('puts the configured mint in the Solana Pay URL', async () => {
    const link = await createLink('3');
    const got = (await stack.request({ method: 'GET', url: `/v1/payment-links/${link.id}`, key: store.keys.test.secretKey })).body;
    expect(got.solanaPayUrl).toContain(`spl-token=${mint}`);
  });

  it('confirms many links paid in the same stretch of slots', async () => {
    const links = [];
    for (let i = 0; i < 12; i++) links.push(await createLink(`${i + 1}`));
    for (const [i, l] of links.entries()) pay(l, usd(i + 1));
    emu.ledger.finalize();
    for (const l of links) await until(l.id, (x) => x.status === 'CONFIRMED', `${l.id} CONFIRMED`);
  });
});

describe('reading one reference', () => {
  it('walks a backlog longer than a tick down in chunks, reads each transaction once, oldest first, and skips none', async () => {
    const recipient = wallet();
    emu.ledger.fund(recipient, mint, 0n);
    const reference = wallet();
    const noise = wallet();
    emu.ledger.addMint(noise, 6);
    emu.ledger.fund(customer, noise, usd(100));
    const send = (amount: bigint, m = mint) => emu.ledger.submitTransfer({ from: customer, toOwner: recipient, mint: m, amount, references: [reference] });
    const sent = [send(1n, noise), send(1n, noise), send(1n, noise), send(11n), send(1n, noise), send(1n, noise), send(1n, noise), send(1n, noise), send(22n), send(1n, noise), send(1n, noise), send(1n, noise)];
    const owner = { kind: 'payment_link' as const, id: `pl_backlog_${Date.now()}`, storeId: store.clientId };
    const progress: ReferenceProgress = {};
    const connection = new Connection(emu.url);
    const readsBefore = emu.calls.getTransaction ?? 0;
    let rounds = 0;
    for (let done = false; !done; rounds++) {
      if (rounds > 20) throw new Error('the backlog was never read to the end');
      // Pages of 2, 2 pages per tick, 3 transactions per tick: a 12-transaction backlog takes several ticks.
      const ctx = { pool: stack.pool, connection, environment: 'test' as const, mint, budget: { transactions: 3 }, limits: { pageSize: 2, maxPages: 2 } };
      done = (await readReference(ctx, { reference, recipient, owner }, progress, undefined)).complete;
    }
    expect(rounds).toBeGreaterThan(3);
    expect((emu.calls.getTransaction ?? 0) - readsBefore).toBe(sent.length);
    expect(progress.readThrough?.signature).toBe(sent.at(-1));
    const rows = await stack.pool.any(sql.type(z.object({ tx_hash: z.string(), amount_minor: z.string() }))`
      SELECT tx_hash, amount_minor::text FROM chain_deposits WHERE owner_id = ${owner.id} ORDER BY block_number`);
    expect(rows).toEqual([
      { tx_hash: sent[3], amount_minor: '11' },
      { tx_hash: sent[8], amount_minor: '22' },
    ]);
  });
});
