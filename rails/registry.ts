import { railIds, type RailId, type RailRecord, type RailRequirement, type StoreConnections, type UsdtRail } from '../domain/rails.js';
import { bscFacts, ethereumFacts, polygonFacts } from './evm/facts.js';
import type { ChainRailFacts, RailFacts } from './facts.js';
import { mpesaFacts } from './mpesa/facts.js';
import { solanaFacts } from './solana/facts.js';
import { tronFacts } from './tron/facts.js';

/**
 * The rail registry: each rail id to its facts in its adapter folder. Adding a rail is one folder
 * and one line here (rails/README.md). Pure data: workflows may import it.
 */
export const railFacts: Readonly<Record<UsdtRail, ChainRailFacts>> & Readonly<Record<'MOBILE_MONEY', RailFacts>> = {
  MOBILE_MONEY: mpesaFacts,
  USDT_TRON: tronFacts,
  USDT_BSC: bscFacts,
  USDT_ETH: ethereumFacts,
  USDT_POLYGON: polygonFacts,
  USDT_SOL: solanaFacts,
};

export const usdtRails = railIds.filter((id): id is UsdtRail => id !== 'MOBILE_MONEY');

/** Decimals of each rail's token. */
export const railDecimals: Readonly<Record<RailId, number>> = Object.fromEntries(railIds.map((id) => [id, railFacts[id].decimals])) as Record<RailId, number>;

/** The public rail record of the spec; optional fields are absent (not null) for MOBILE_MONEY. */
export function railRecord(id: RailId, assetBaseUrl: string): RailRecord {
  const r = railFacts[id];
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

/** The rails a store's connections make available (spec, availability rules 1 to 4). */
export function availableRails(c: StoreConnections): RailId[] {
  const has: Record<RailRequirement, boolean> = {
    mobile_money: c.mobileMoney,
    tron_xpub: c.tronXpub,
    evm_xpub: c.evmXpub,
    solana_wallet: c.solanaWallet,
  };
  return railIds.filter((id) => has[railFacts[id].requires]);
}

/** Short network names (TRON, BSC, ETH, POLYGON, SOL) as invoices and transfer events name them. */
export const usdtNetworks = usdtRails.map((r) => railFacts[r].network);
export const railOfNetwork = (network: string): UsdtRail | undefined => usdtRails.find((r) => railFacts[r].network === network);
