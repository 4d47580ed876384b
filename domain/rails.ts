/**
 * The six built-in rails' ids and the types around them. Everything else about a rail (decimals,
 * display, endpoints, client, scanner) is in its adapter folder, found through rails/registry.ts,
 * which also holds the rails a composition root registered at boot (rails/register.ts): ask it
 * (`allRails`, `isRailId`) which rails this process has. `RailId` types the built-in ones; a
 * registered rail travels as one.
 */
export const railIds = ['MOBILE_MONEY', 'USDT_TRON', 'USDT_BSC', 'USDT_ETH', 'USDT_POLYGON', 'USDT_SOL'] as const;
export type RailId = (typeof railIds)[number];
export type UsdtRail = Exclude<RailId, 'MOBILE_MONEY'>;

/** Which store connection makes a rail available (spec, availability rules 1 to 4). */
export type RailRequirement = 'mobile_money' | 'tron_xpub' | 'evm_xpub' | 'solana_wallet';

/** The public rail record of the spec; optional fields are absent (not null) for MOBILE_MONEY. */
export interface RailRecord {
  network: RailId;
  displayName: string;
  tokenSymbol: string;
  tokenStandard?: string;
  chainLogoUrl: string;
  tokenLogoUrl?: string;
  estimatedFeeUsd?: string;
  estimatedConfirmationSeconds: number;
  tagline: string;
}

/** What a store has connected in one environment. */
export interface StoreConnections {
  mobileMoney: boolean;
  tronXpub: boolean;
  evmXpub: boolean;
  solanaWallet: boolean;
}
