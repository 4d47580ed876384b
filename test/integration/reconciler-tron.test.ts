import { afterAll, beforeAll, describe, expect, it } from '@jest/globals';
import { randomBytes } from 'node:crypto';
import { sql } from 'slonik';
import { z } from 'zod';
import { createReconciliationActivities } from '../../activities/reconciliation/index.js';
import type { CreatedStore } from '../../db/store-repo.js';
import { tronAddressFromBytes } from '../../rails/tron/address.js';
import { startTronGridEmulator, type TronGridEmulator } from '../../emulators/trongrid/server.js';
import { connectAllRails } from '../helpers/fixtures.js';
import { startStack, type Stack } from '../helpers/stack.js';

/**
 * The reconciler on TRON, through the TronGrid emulator: balances from the constant-call endpoint
 * (`/wallet/triggerconstantcontract`, one call per address), rescans through `/jsonrpc`
 * `eth_getLogs` with the recipient as a topic. No watcher runs here, so every deposit the ledger
 * gets comes from the reconciler's rescan.
 */
const tronAddress = () => tronAddressFromBytes(randomBytes(20));
const usdtContract = tronAddress();
const payer = tronAddress();
let tron: TronGridEmulator;
let stack: Stack;
let store: CreatedStore;
const reconcile = () =>
  createReconciliationActivities({ pool: stack.pool, config: stack.config, temporal: stack.temporal }).reconcilePage({ rail: 'USDT_TRON', environment: 'test', after: null });

beforeAll(async () => {
  tron = await startTronGridEmulator();
  tron.addToken(usdtContract);
  stack = await startStack({ RPC_URL_USDT_TRON_TEST: tron.url, USDT_CONTRACT_USDT_TRON_TEST: usdtContract });
  store = await stack.createStore('TRON reconciled');
  await connectAllRails(stack, store.clientId, 'test');
}, 60_000);
afterAll(async () => {
  await stack?.stop();
  await tron?.close();
});

const deposits = (to: string) =>
  stack.pool.any(sql.type(z.object({ tx_hash: z.string(), state: z.string(), owner_id: z.string(), amount_minor: z.string() }))`
    SELECT tx_hash, state, owner_id, amount_minor::text FROM chain_deposits WHERE to_address = ${to}`);
const findings = (address: string) =>
  stack.pool.any(sql.type(z.object({ kind: z.string(), status: z.string(), difference_minor: z.string() }))`
    SELECT kind, status, difference_minor::text FROM reconciliation_findings WHERE address = ${address} ORDER BY created_at`);

describe('reconciler (TRON, TronGrid emulator)', () => {
  it('records a transfer the ledger missed from its targeted rescan, and reports what no transfer explains', async () => {
    const link = (await stack.request({ method: 'POST', url: '/v1/payment-links', key: store.keys.test.secretKey, payload: { usdtAmount: '5', enabledRails: ['USDT_TRON'] } })).body;
    const [txid] = tron.chain.mine(1, [{ contract: usdtContract, from: payer, to: link.tronAddress, amount: 5_000_000n }]);
    tron.setBalance(usdtContract, link.tronAddress, 5_000_000n);
    tron.chain.mine(2);

    const first = await reconcile();
    expect(first).toMatchObject({ checked: 1, rescanned: 1, recovered: 1, mismatches: 0 });
    expect(await deposits(link.tronAddress)).toEqual([{ tx_hash: `0x${txid}`, state: 'seen', owner_id: link.id, amount_minor: '5000000' }]);
    expect(await findings(link.tronAddress)).toEqual([]);
    expect(tron.calls).toBe(1); // one constant call for the one watched address

    // Two more USDT than any transfer to the address explains.
    tron.setBalance(usdtContract, link.tronAddress, 7_000_000n);
    expect(await reconcile()).toMatchObject({ rescanned: 1, recovered: 0, mismatches: 1 });
    expect(await findings(link.tronAddress)).toEqual([{ kind: 'mismatch', status: 'open', difference_minor: '2000000' }]);
    const events = await stack.pool.anyFirst(sql.type(z.object({ payload: z.any() }))`
      SELECT payload FROM events WHERE store_id = ${store.clientId} AND type = 'reconciliation.mismatch'`);
    expect(events).toEqual([expect.objectContaining({ data: expect.objectContaining({ network: 'TRON', address: link.tronAddress, balance: '7', recorded: '5', difference: '2' }) })]);

    // Reported once; a balance back in line resolves it.
    await reconcile();
    tron.setBalance(usdtContract, link.tronAddress, 5_000_000n);
    expect(await reconcile()).toMatchObject({ mismatches: 0, outflows: 0 });
    expect(await findings(link.tronAddress)).toEqual([{ kind: 'mismatch', status: 'resolved', difference_minor: '2000000' }]);
  }, 60_000);
});
