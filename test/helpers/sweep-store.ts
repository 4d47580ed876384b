import type { CreatedStore } from '../../db/store-repo.js';
import { startTronGridEmulator, type TronGridEmulator } from '../../emulators/trongrid/server.js';
import { tronMulticall3 } from '../../rails/tron/holdings.js';
import { addSweepDestination } from '../../services/treasury/destinations.js';
import { dashboardUser } from './dashboard-users.js';
import { connectAllRails, evmXpub, tronXpub } from './fixtures.js';
import type { Stack } from './stack.js';

/**
 * A store ready to sweep (the treasury suites' common start): connected with the test mnemonic's
 * xpubs (so `sweep:sign` derives its addresses), and `destination` on its allowlist for each
 * rail, added by an owner (the stack must run with TREASURY_DESTINATION_DELAY_SECONDS=0 for it to
 * be usable at once).
 */
export async function sweepingStore(stack: Stack, name: string, rails: readonly string[], destination: string): Promise<{ store: CreatedStore; key: string }> {
  const store = await stack.createStore(name);
  await connectAllRails(stack, store.clientId, 'test', { evm: evmXpub, tron: tronXpub });
  const owner = await dashboardUser(stack, store, 'owner');
  for (const rail of rails) {
    await addSweepDestination(stack, { storeId: store.clientId, environment: 'test' }, owner.userId, { rail, address: destination, label: 'cold' });
  }
  return { store, key: store.keys.test.secretKey };
}

/** The TronGrid emulator with a USDT token at `usdt` and Multicall3 where the test environment has it. */
export async function tronSweepChain(usdt: string): Promise<TronGridEmulator> {
  const tron = await startTronGridEmulator();
  tron.addToken(usdt);
  tron.addMulticall3(tronMulticall3.test);
  return tron;
}
