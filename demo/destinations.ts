import type { DatabasePool } from 'slonik';
import type { Address } from 'viem';
import { mnemonicToAccount } from 'viem/accounts';
import { findUserByEmail } from '../db/dashboard-user-repo.js';
import type { ServiceSettings } from '../services/settings.js';
import { addSweepDestination, listSweepDestinations } from '../services/treasury/destinations.js';
import { demoEvmRails } from './chain.js';

/**
 * The demo store's sweep destination (docs/demo.md, "Sweep the demo's payments"): the owner's
 * "cold wallet", an address of the demo's public test mnemonic ("abandon … about", whose xpubs the
 * demo store uses), added by the owner's account on every EVM rail as the dashboard would, once.
 * The demo runs with `TREASURY_DESTINATION_DELAY_SECONDS=0`, so it is usable at once.
 */
export const demoMnemonic = 'abandon abandon abandon abandon abandon abandon abandon abandon abandon abandon abandon about';
export const demoDestination = mnemonicToAccount(demoMnemonic, { path: "m/44'/60'/0'/0/1" }).address.toLowerCase() as Address;
/** The signer's default funding key (`m/44'/60'/0'/0/0`): it pays the sources' gas. */
export const demoFunding = mnemonicToAccount(demoMnemonic, { path: "m/44'/60'/0'/0/0" }).address;

export async function addDemoDestinations(pool: DatabasePool, config: ServiceSettings, storeId: string, ownerEmail: string): Promise<void> {
  const owner = await findUserByEmail(pool, ownerEmail);
  if (!owner) return;
  const scope = { storeId, environment: 'test' as const };
  const have = new Set((await listSweepDestinations({ pool }, scope)).map((d) => `${d.rail}:${d.address}`));
  for (const rail of demoEvmRails) {
    if (have.has(`${rail}:${demoDestination}`)) continue;
    await addSweepDestination({ pool, config }, scope, owner.id, { rail, address: demoDestination, label: 'Demo cold wallet' });
  }
}
