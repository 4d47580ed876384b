/**
 * The six rails' ids and the types around them. Everything else about a rail (decimals, display,
 * endpoints, client, scanner) is in its adapter folder, found through rails/registry.ts.
 */
export const railIds = ['MOBILE_MONEY', 'USDT_TRON', 'USDT_BSC', 'USDT_ETH', 'USDT_POLYGON', 'USDT_SOL'] as const;
export type RailId = (typeof railIds)[number];
export type UsdtRail = Exclude<RailId, 'MOBILE_MONEY'>;

export function isRailId(value: unknown): value is RailId {
  return typeof value === 'string' && (railIds as readonly string[]).includes(value);
}

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
