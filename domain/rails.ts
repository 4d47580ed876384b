/**
 * The six rails and their static metadata. Adding a rail touches this registry and one adapter
 * folder under `activities/chains/`. Fee and time figures are estimates for a USDT transfer to a
 * fresh address (see research/chains.md): they are shown to customers, never used for money.
 */
export const railIds = ['MOBILE_MONEY', 'USDT_TRON', 'USDT_BSC', 'USDT_ETH', 'USDT_POLYGON', 'USDT_SOL'] as const;
export type RailId = (typeof railIds)[number];
export type UsdtRail = Exclude<RailId, 'MOBILE_MONEY'>;

export function isRailId(value: unknown): value is RailId {
  return typeof value === 'string' && (railIds as readonly string[]).includes(value);
}

/** Decimals of the rail's token: USDT has 18 on BSC and 6 elsewhere; M-Pesa takes whole shillings. */
export const railDecimals: Readonly<Record<RailId, number>> = {
  MOBILE_MONEY: 0,
  USDT_TRON: 6,
  USDT_BSC: 18,
  USDT_ETH: 6,
  USDT_POLYGON: 6,
  USDT_SOL: 6,
};

/** Which store connection makes a rail available (spec, availability rules 1 to 4). */
export type RailRequirement = 'mobile_money' | 'tron_xpub' | 'evm_xpub' | 'solana_wallet';

interface RailSpec {
  displayName: string;
  tokenSymbol: 'KES' | 'USDT';
  tokenStandard?: string;
  chainLogo: string;
  tokenLogo?: string;
  estimatedFeeUsd?: string;
  estimatedConfirmationSeconds: number;
  tagline: string;
  requires: RailRequirement;
}

export const rails: Readonly<Record<RailId, RailSpec>> = {
  MOBILE_MONEY: {
    displayName: 'M-Pesa',
    tokenSymbol: 'KES',
    chainLogo: 'mpesa.svg',
    estimatedConfirmationSeconds: 30,
    tagline: 'Pay with an M-Pesa prompt on your phone',
    requires: 'mobile_money',
  },
  USDT_TRON: {
    displayName: 'TRON',
    tokenSymbol: 'USDT',
    tokenStandard: 'TRC20',
    chainLogo: 'tron.svg',
    tokenLogo: 'usdt.svg',
    estimatedFeeUsd: '3.50',
    estimatedConfirmationSeconds: 60,
    tagline: 'USDT on TRON, the most used stablecoin network',
    requires: 'tron_xpub',
  },
  USDT_BSC: {
    displayName: 'BNB Smart Chain',
    tokenSymbol: 'USDT',
    tokenStandard: 'BEP20',
    chainLogo: 'bsc.svg',
    tokenLogo: 'usdt.svg',
    estimatedFeeUsd: '0.01',
    estimatedConfirmationSeconds: 5,
    tagline: 'USDT on BNB Smart Chain, fast and cheap',
    requires: 'evm_xpub',
  },
  USDT_ETH: {
    displayName: 'Ethereum',
    tokenSymbol: 'USDT',
    tokenStandard: 'ERC20',
    chainLogo: 'ethereum.svg',
    tokenLogo: 'usdt.svg',
    estimatedFeeUsd: '0.50',
    estimatedConfirmationSeconds: 960,
    tagline: 'USDT on Ethereum mainnet',
    requires: 'evm_xpub',
  },
  USDT_POLYGON: {
    displayName: 'Polygon PoS',
    tokenSymbol: 'USDT',
    tokenStandard: 'Polygon PoS',
    chainLogo: 'polygon.svg',
    tokenLogo: 'usdt.svg',
    estimatedFeeUsd: '0.01',
    estimatedConfirmationSeconds: 10,
    tagline: 'USDT on Polygon, low fees',
    requires: 'evm_xpub',
  },
  USDT_SOL: {
    displayName: 'Solana',
    tokenSymbol: 'USDT',
    tokenStandard: 'SPL',
    chainLogo: 'solana.svg',
    tokenLogo: 'usdt.svg',
    estimatedFeeUsd: '0.01',
    estimatedConfirmationSeconds: 15,
    tagline: 'USDT on Solana, settles in seconds',
    requires: 'solana_wallet',
  },
};

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

export function railRecord(id: RailId, assetBaseUrl: string): RailRecord {
  const r = rails[id];
  const record: RailRecord = {
    network: id,
    displayName: r.displayName,
    tokenSymbol: r.tokenSymbol,
    chainLogoUrl: `${assetBaseUrl}/static/logos/${r.chainLogo}`,
    estimatedConfirmationSeconds: r.estimatedConfirmationSeconds,
    tagline: r.tagline,
  };
  if (r.tokenStandard) record.tokenStandard = r.tokenStandard;
  if (r.tokenLogo) record.tokenLogoUrl = `${assetBaseUrl}/static/logos/${r.tokenLogo}`;
  if (r.estimatedFeeUsd) record.estimatedFeeUsd = r.estimatedFeeUsd;
  return record;
}

/** What a store has connected in one environment. */
export interface StoreConnections {
  mobileMoney: boolean;
  tronXpub: boolean;
  evmXpub: boolean;
  solanaWallet: boolean;
}

export function availableRails(c: StoreConnections): RailId[] {
  const has: Record<RailRequirement, boolean> = {
    mobile_money: c.mobileMoney,
    tron_xpub: c.tronXpub,
    evm_xpub: c.evmXpub,
    solana_wallet: c.solanaWallet,
  };
  return railIds.filter((id) => has[rails[id].requires]);
}
