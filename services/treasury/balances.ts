import { handedOutAddresses, type HandedOutAddress, type TreasuryFamily } from '../../db/treasury-repo.js';
import { AppError } from '../../domain/errors.js';
import { formatUnits } from '../../domain/money.js';
import type { UsdtRail } from '../../domain/rails.js';
import { adapterOf } from '../../rails/adapters.js';
import { isRailId, railFacts, usdtRails } from '../../rails/registry.js';
import { railEndpoint } from '../../rails/settings.js';
import type { ServiceDeps } from '../deps.js';
import type { StoreScope } from '../scope.js';

/**
 * Treasury balances (docs/treasury.md): per rail, what sits on the addresses Malipo handed out
 * for the store (link, invoice and derived receive addresses), read from the chain by the rail's
 * adapter in batches at one block. The total covers every address; the addresses come a page at a
 * time, by address, after an opaque cursor.
 */
export type TreasuryStatus = 'read' | 'nothing_to_sweep' | 'not_built' | 'not_configured' | 'unavailable';

export interface TreasuryAddressDto {
  address: string;
  /** The BIP-44 path from the store's key (m/44'/60'/0'/1/7); null for an address whose index was never recorded. */
  path: string | null;
  source: 'payment_link' | 'invoice' | 'derived';
  /** The payment link or invoice id; null for a derived address. */
  ownerId: string | null;
  /** Token balance, decimal string; null when this address could not be read this time. */
  tokenBalance: string | null;
  /** Native-coin balance (gas), decimal string; null when it could not be read. */
  nativeBalance: string | null;
}

export interface TreasuryRailDto {
  rail: string;
  displayName: string;
  status: TreasuryStatus;
  /** Why there is no reading (any status but `read`); null when read. */
  message: string | null;
  tokenSymbol: string;
  tokenDecimals: number;
  tokenContract: string | null;
  nativeCoin: string | null;
  /** Addresses handed out on the rail's key family (all pages). */
  addressCount: number;
  /** Addresses whose token balance could not be read this time (not in the totals). */
  unreadCount: number;
  totalToken: string;
  totalNative: string;
  /** The block the balances are at (decimal string) and its time; null when nothing was read. */
  blockNumber: string | null;
  blockTime: string | null;
  readAt: string;
  addresses: TreasuryAddressDto[];
  /** Pass as `cursor` (with `rail`) for the next page of addresses; null on the last page. */
  nextCursor: string | null;
}

export const treasuryPageLimit = { default: 100, max: 500 } as const;

/** Rails a treasury is listed for: every USDT rail whose adapter declares one (M-Pesa has none). */
export function treasuryRails(): UsdtRail[] {
  return usdtRails.filter((r) => adapterOf(r).treasury !== undefined);
}

/** Rails whose treasury holds money of its own to move (a sweep destination applies). */
export function sweepableRails(): UsdtRail[] {
  return treasuryRails().filter((r) => adapterOf(r).treasury?.kind === 'holdings');
}

export function parseTreasuryRail(value: string): UsdtRail {
  const rails = treasuryRails();
  if (!isRailId(value) || !rails.includes(value as UsdtRail)) {
    throw new AppError('invalid_field', `Invalid 'rail': must be one of ${rails.join(', ')}.`, 'rail');
  }
  return value as UsdtRail;
}

const encodeCursor = (address: string) => Buffer.from(`a:${address}`, 'utf8').toString('base64url');

function decodeCursor(cursor: string): string {
  const text = /^[A-Za-z0-9_-]{1,200}$/.test(cursor) ? Buffer.from(cursor, 'base64url').toString('utf8') : '';
  if (!text.startsWith('a:') || text.length < 3) throw new AppError('invalid_field', "Invalid 'cursor': pass the nextCursor of a previous answer unchanged.", 'cursor');
  return text.slice(2);
}

interface Holder {
  key: string;
  row: HandedOutAddress;
}

/** One row per address (the ledger form), the earliest handing out first when two sources name it; sorted by address. */
function holdersOf(rows: readonly HandedOutAddress[], ledgerKey: (a: string) => string): Holder[] {
  const byKey = new Map<string, Holder>();
  for (const row of [...rows].sort((a, b) => a.created_at.localeCompare(b.created_at))) {
    const key = ledgerKey(row.address);
    if (!byKey.has(key)) byKey.set(key, { key, row });
  }
  return [...byKey.values()].sort((a, b) => (a.key < b.key ? -1 : a.key > b.key ? 1 : 0));
}

/** The rail's handed-out addresses of the scope (ledger form, sorted) with their derivation paths; null when the rail hands out none. */
export async function handedOutHolders(deps: Pick<ServiceDeps, 'pool'>, scope: StoreScope, rail: UsdtRail): Promise<Array<{ address: string; path: string | null }> | null> {
  const adapter = adapterOf(rail);
  const key = adapter.walletKey;
  if (!key || key.input !== 'xpub') return null;
  const holders = holdersOf(await handedOutAddresses(deps.pool, scope.storeId, scope.environment, key.slot as TreasuryFamily), (a) => adapter.ledgerKey(a));
  return holders.map((h) => ({ address: h.key, path: key.accountPath && h.row.derivation_index !== null ? `${key.accountPath}/${h.row.branch}/${h.row.derivation_index}` : null }));
}

async function railBalances(deps: Pick<ServiceDeps, 'pool' | 'config' | 'logger'>, scope: StoreScope, rail: UsdtRail, page: { cursor: string | null; limit: number }): Promise<TreasuryRailDto> {
  const adapter = adapterOf(rail);
  const facts = railFacts[rail];
  const treasury = adapter.treasury!;
  const contract = railEndpoint(deps.config.rails, rail, scope.environment).usdtContract ?? null;
  const base: TreasuryRailDto = {
    rail, displayName: facts.displayName, status: 'read', message: null, tokenSymbol: facts.tokenSymbol, tokenDecimals: facts.decimals,
    tokenContract: contract, nativeCoin: facts.nativeCoin ?? null, addressCount: 0, unreadCount: 0, totalToken: '0', totalNative: '0',
    blockNumber: null, blockTime: null, readAt: new Date().toISOString(), addresses: [], nextCursor: null,
  };
  if (treasury.kind === 'none') return { ...base, status: 'nothing_to_sweep', message: treasury.reason };
  if (treasury.kind === 'not_built') return { ...base, status: 'not_built', message: treasury.reason };
  const key = adapter.walletKey;
  if (!key || key.input !== 'xpub') return { ...base, status: 'nothing_to_sweep', message: 'This rail hands out no addresses of its own.' };
  const holders = holdersOf(await handedOutAddresses(deps.pool, scope.storeId, scope.environment, key.slot as TreasuryFamily), (a) => adapter.ledgerKey(a));
  const after = page.cursor === null ? null : decodeCursor(page.cursor);
  const start = after === null ? 0 : holders.findIndex((h) => h.key > after);
  const shown = start < 0 ? [] : holders.slice(start, start + page.limit);
  const last = shown.at(-1);
  const nextCursor = last && holders.at(-1) !== last ? encodeCursor(last.key) : null;
  const described = { ...base, addressCount: holders.length, nextCursor };
  const pathOf = (h: Holder) => (key.accountPath && h.row.derivation_index !== null ? `${key.accountPath}/${h.row.branch}/${h.row.derivation_index}` : null);
  const dto = (h: Holder, token: bigint | undefined, native: bigint | undefined): TreasuryAddressDto => ({
    address: h.key, path: pathOf(h), source: h.row.source, ownerId: h.row.owner_id,
    tokenBalance: token === undefined ? null : formatUnits(token, facts.decimals),
    nativeBalance: native === undefined ? null : formatUnits(native, treasury.nativeDecimals),
  });
  if (holders.length === 0) return described;
  const reading = treasury.read(deps.config.rails, rail, scope.environment, holders.map((h) => h.key));
  if (reading === null) {
    return { ...described, status: 'not_configured', message: `No ${facts.tokenSymbol} contract is configured for ${rail} in the ${scope.environment} environment.`, addresses: shown.map((h) => dto(h, undefined, undefined)) };
  }
  try {
    const read = await reading;
    const index = new Map(holders.map((h, i) => [h.key, i]));
    let totalToken = 0n;
    let totalNative = 0n;
    let unread = 0;
    for (let i = 0; i < holders.length; i++) {
      const t = read.token[i];
      if (t === undefined) unread++;
      else totalToken += t;
      totalNative += read.native[i] ?? 0n;
    }
    return {
      ...described,
      unreadCount: unread,
      totalToken: formatUnits(totalToken, facts.decimals),
      totalNative: formatUnits(totalNative, treasury.nativeDecimals),
      blockNumber: read.blockNumber.toString(),
      blockTime: new Date(Number(read.blockTimestamp) * 1000).toISOString(),
      readAt: new Date().toISOString(),
      addresses: shown.map((h) => dto(h, read.token[index.get(h.key)!], read.native[index.get(h.key)!])),
    };
  } catch (err) {
    deps.logger?.warn({ rail, environment: scope.environment, reason: (err as Error).message }, 'treasury balance read failed');
    return {
      ...described, status: 'unavailable', unreadCount: holders.length,
      message: `Could not read balances from the ${facts.network ?? rail} network; nothing was guessed. Try again shortly.`,
      addresses: shown.map((h) => dto(h, undefined, undefined)),
    };
  }
}

/** The scope's treasury, per rail (or the one `rail`), each with one page of its addresses. */
export async function treasuryBalances(
  deps: Pick<ServiceDeps, 'pool' | 'config' | 'logger'>,
  scope: StoreScope,
  q: { rail?: UsdtRail; cursor?: string; limit?: number },
): Promise<TreasuryRailDto[]> {
  if (q.cursor !== undefined && q.rail === undefined) throw new AppError('invalid_field', "Invalid 'cursor': a cursor pages one rail's addresses; pass the rail too.", 'cursor');
  const rails = q.rail ? [q.rail] : treasuryRails();
  const page = { cursor: q.cursor ?? null, limit: q.limit ?? treasuryPageLimit.default };
  return Promise.all(rails.map((rail) => railBalances(deps, scope, rail, page)));
}
