import type { DatabasePool } from 'slonik';
import { usableRailRpcUrls } from '../../rails/evm/chain-ids.js';
import { adapterOf } from '../../rails/adapters.js';
import type { RailAdapter } from '../../rails/payment-method.js';
import { findWalletKeys } from '../../db/store-repo.js';
import { BoundedCache } from '../../domain/bounded-cache.js';
import { AppError } from '../../domain/errors.js';
import { receiveAddress } from '../../rails/chain/derive-address.js';
import type { WalletKind } from '../../domain/hd/xpub.js';
import { formatUnits } from '../../domain/money.js';
import { type UsdtRail } from '../../domain/rails.js';
import { railDecimals } from '../../rails/registry.js';
import { railEndpoint, type RailSettings } from '../../rails/settings.js';
import type { StoreScope } from '../scope.js';
import { recordDeriveSoon } from './derive-batches.js';
import { scheduleGapFill, type HandedOut } from './derived-addresses.js';

/** The adapter's live balance read (short timeouts, one retry: a person is waiting). */
function readBalanceOf(rail: UsdtRail): NonNullable<RailAdapter['readBalance']> {
  const read = adapterOf(rail).readBalance;
  if (!read) throw new Error(`${rail} has no balance read`);
  return read;
}

/**
 * Derived wallets: the receive-branch addresses `<xpub>/0/<index>` a merchant hands out to its
 * own users, and their USDT balances read live from the chain. Which indexes were handed out is
 * stored (with the gap after the highest: what the transfer watcher matches), never for whom.
 */
export const derivedNetworks = ['TRON', 'BSC'] as const;
export type DerivedNetwork = (typeof derivedNetworks)[number];

interface NetworkSpec {
  kind: WalletKind;
  rail: UsdtRail;
}

// The spec's two derived-wallet networks; each balance is read by its rail's adapter (readBalance).
const networks: Record<DerivedNetwork, NetworkSpec> = {
  TRON: { kind: 'tron', rail: 'USDT_TRON' },
  BSC: { kind: 'evm', rail: 'USDT_BSC' },
};

const connectHint: Record<WalletKind, string> = {
  tron: 'PUT /v1/merchant/clients/:clientId/wallets/tron',
  evm: 'PUT /v1/merchant/clients/:clientId/wallets/evm',
};

export interface DerivedWallet {
  index: number;
  tron: string | null;
  bsc: string | null;
  /** Present only when a key is missing: the networks whose address is null. */
  missing?: DerivedNetwork[];
}

type ReceiveKeys = { tron: string | null; evm: string | null };

/**
 * The TRON and EVM keys each store was last seen with in this process (bounded, least recently
 * used goes first). Never trusted on its own: the statement that records a derive checks that
 * the addresses were derived from exactly the keys registered now, and answers those keys when
 * they differ, so a stale entry costs one more derivation and statement, never a wrong address.
 */
const knownKeys = new BoundedCache<string, ReceiveKeys>(10_000);

function walletAt(keys: ReceiveKeys, index: number): { result: DerivedWallet; handed: HandedOut[] } {
  const result: DerivedWallet = {
    index,
    tron: keys.tron ? receiveAddress(keys.tron, 'tron', index) : null,
    bsc: keys.evm ? receiveAddress(keys.evm, 'evm', index) : null,
  };
  const missing = derivedNetworks.filter((n) => result[n === 'TRON' ? 'tron' : 'bsc'] === null);
  if (missing.length) result.missing = missing;
  const handed: HandedOut[] = [];
  if (keys.tron && result.tron) handed.push({ family: 'tron', publicKey: keys.tron, address: result.tron });
  if (keys.evm && result.bsc) handed.push({ family: 'evm', publicKey: keys.evm, address: result.bsc });
  return { result, handed };
}

/**
 * Both addresses at `index`, or the one whose xpub is registered; 400 when neither is (nothing
 * stored). Once the store's keys are known to this process, a derive is one statement, shared with
 * the store's other derives waiting meanwhile (derive-batches.ts): it records the index for the
 * watcher and raises the highest (`recordDerives`). When that raised the highest,
 * or the keys were not known yet, the gap after the highest is filled after the answer.
 */
export async function deriveReceiveWallet(pool: DatabasePool, auth: StoreScope, index: number, onGapFillError: (err: unknown) => void = () => undefined): Promise<DerivedWallet> {
  const id = `${auth.storeId}\u0000${auth.environment}`;
  let keys = knownKeys.get(id);
  let fresh = keys === undefined;
  keys ??= await findWalletKeys(pool, auth.storeId, auth.environment);
  // A key changed at most once between two statements in practice; three rounds bound a flapping one.
  for (let round = 0; round < 3; round++) {
    if (!keys.tron && !keys.evm) {
      knownKeys.delete(id);
      throw new AppError(
        'wallet_not_connected',
        `No TRON or EVM xpub is registered in the ${auth.environment} environment: register one with ${connectHint.tron} or ${connectHint.evm}.`,
      );
    }
    const { result, handed } = walletAt(keys, index);
    const record = await recordDeriveSoon(pool, auth.storeId, auth.environment, index, handed);
    if (record.matched) {
      knownKeys.set(id, keys);
      if (record.raised || fresh) scheduleGapFill(pool, auth.storeId, auth.environment, onGapFillError);
      return result;
    }
    keys = record.keys;
    fresh = true;
  }
  throw new AppError('upstream_unavailable', 'The store\'s wallet keys changed during the derivation: try again.');
}

export interface DerivedBalance {
  index: number;
  address: string;
  network: DerivedNetwork;
  balance: string;
}

/** The derived address of `network` at `index`, before any chain call (validation first). */
export async function derivedAddressFor(pool: DatabasePool, auth: StoreScope, index: number, network: DerivedNetwork): Promise<string> {
  const { kind } = networks[network];
  const xpub = (await findWalletKeys(pool, auth.storeId, auth.environment))[kind];
  if (!xpub) {
    throw new AppError('wallet_not_connected', `No ${kind.toUpperCase()} xpub is registered in the ${auth.environment} environment: register one with ${connectHint[kind]}.`, 'network');
  }
  return receiveAddress(xpub, kind, index);
}

/** USDT balance in the token's smallest unit, then as a decimal string. Throws on any upstream failure. */
export async function readUsdtBalance(rails: RailSettings, auth: StoreScope, network: DerivedNetwork, address: string): Promise<string> {
  const spec = networks[network];
  const endpoint = railEndpoint(rails, spec.rail, auth.environment);
  if (!endpoint.usdtContract) {
    const env = auth.environment.toUpperCase();
    throw new AppError('upstream_unavailable', `No USDT contract is configured for ${spec.rail} in ${auth.environment}: set USDT_CONTRACT_${spec.rail}_${env}.`);
  }
  // An EVM RPC found on another chain at start is never asked (rails/evm/chain-ids.ts).
  const [rpcUrl] = usableRailRpcUrls(rails, spec.rail, auth.environment);
  if (!rpcUrl) {
    const setting = `CHAIN_ID_${spec.rail}_${auth.environment.toUpperCase()}`;
    throw new AppError('upstream_unavailable', `Every RPC configured for ${spec.rail} in ${auth.environment} is on another chain than ${setting} names, so none is used (GET /ready).`);
  }
  const minor = await readBalanceOf(spec.rail)(rpcUrl, endpoint.usdtContract, address);
  return formatUnits(minor, railDecimals[spec.rail]);
}
