import type { DatabasePool } from 'slonik';
import { deleteWallet, registerStoreKey, upsertWallet, type WalletSlot } from '../../db/wallet-repo.js';
import type { Environment } from '../../domain/environment.js';
import { AppError, notFound } from '../../domain/errors.js';
import type { RailId, RailRequirement } from '../../domain/rails.js';
import { allRails, railFacts as rails } from '../../rails/registry.js';
import { methodOfWalletSlot } from '../../rails/methods.js';
import { StoreKeyError, type ConnectedKey } from '../../rails/payment-method.js';
import type { StoreScope } from '../scope.js';

/**
 * Connecting and disconnecting a store's wallets, one slot per environment of the key. The
 * xpub or address is validated before anything is written; a refused key changes nothing.
 */
export const walletNetworks = { tron: 'TRON', evm: 'EVM', solana: 'SOLANA' } as const satisfies Record<WalletSlot, string>;
export type WalletNetwork = (typeof walletNetworks)[WalletSlot];

const slotRequirement: Record<WalletSlot, RailRequirement> = { tron: 'tron_xpub', evm: 'evm_xpub', solana: 'solana_wallet' };

/** The rails a slot makes available (spec availability rules 2 to 4). */
export function railsOfSlot(slot: WalletSlot): RailId[] {
  return allRails().filter((id) => rails[id].requires === slotRequirement[slot]);
}

export interface ConnectedWallet {
  ok: true;
  network: WalletNetwork;
  environment: Environment;
  firstAddress: string;
  firstAddressPath: string | null;
  rails: RailId[];
}

/** Only the key's own store may be changed; any other id is "not found" (never reveal existence). */
export function assertOwnStore(auth: StoreScope, clientId: string): void {
  if (clientId !== auth.storeId) throw notFound('client');
}

function parseKey(slot: WalletSlot, raw: string): ConnectedKey {
  const { walletKey } = methodOfWalletSlot(slot);
  try {
    return walletKey.parse(raw);
  } catch (err) {
    if (err instanceof StoreKeyError) throw new AppError('invalid_field', err.message, walletKey.input);
    throw err;
  }
}

/** Says what to do instead, and nothing about the store that holds the key. */
function keyInUseMessage(accountPath: string): string {
  const nextAccount = accountPath.replace(/0'$/, "1'");
  return (
    'This extended public key is already registered with another store, and a key belongs to one store ' +
    `(its test and live environments may share it). Register the key of another account, such as ${nextAccount}, or of another wallet.`
  );
}

export async function connectWallet(pool: DatabasePool, auth: StoreScope, clientId: string, slot: WalletSlot, raw: string): Promise<ConnectedWallet> {
  assertOwnStore(auth, clientId);
  const { walletKey } = methodOfWalletSlot(slot);
  const { key, firstAddress, firstAddressPath } = parseKey(slot, raw);
  if (!walletKey.exclusive) {
    // One wallet may serve several stores: each link is found by its own reference (Solana Pay).
    await upsertWallet(pool, auth.storeId, auth.environment, slot, key);
  } else if (!(await registerStoreKey(pool, auth.storeId, auth.environment, slot, key))) {
    throw new AppError('wallet_key_in_use', keyInUseMessage(walletKey.accountPath ?? ''), 'xpub');
  }
  return {
    ok: true,
    network: walletNetworks[slot],
    environment: auth.environment,
    firstAddress,
    firstAddressPath,
    rails: railsOfSlot(slot),
  };
}

export async function disconnectWallet(pool: DatabasePool, auth: StoreScope, clientId: string, slot: WalletSlot) {
  assertOwnStore(auth, clientId);
  if (!(await deleteWallet(pool, auth.storeId, auth.environment, slot))) {
    throw new AppError('not_found', `No ${walletNetworks[slot]} wallet is connected to this store in the ${auth.environment} environment.`);
  }
  return { ok: true as const, network: walletNetworks[slot], environment: auth.environment, rails: railsOfSlot(slot) };
}
