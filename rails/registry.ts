import { railIds as builtInRailIds, type RailId, type RailRecord, type RailRequirement, type StoreConnections, type UsdtRail } from '../domain/rails.js';
import { bscFacts, ethereumFacts, polygonFacts } from './evm/facts.js';
import type { LinkRailTerms } from '../domain/workflow-contract.js';
import type { ChainRailFacts, RailFacts } from './facts.js';
import { mpesaFacts } from './mpesa/facts.js';
import { solanaFacts } from './solana/facts.js';
import { tronFacts } from './tron/facts.js';

/**
 * The rail registry: each rail id to its facts in its adapter folder. Adding a built-in rail is one
 * folder and one line here (rails/README.md); a composition root may add one more at boot, before
 * the rail set is sealed (rails/register.ts, docs/adding-a-rail.md). Pure data: workflows may
 * import it, but they see the built-in rails only (Temporal's sandbox evaluates this module anew):
 * what the link workflow needs of a rail travels in its input (`PaymentLinkInput.railTerms`).
 */
const facts: Record<string, RailFacts> = {
  MOBILE_MONEY: mpesaFacts,
  USDT_TRON: tronFacts,
  USDT_BSC: bscFacts,
  USDT_ETH: ethereumFacts,
  USDT_POLYGON: polygonFacts,
  USDT_SOL: solanaFacts,
};
export const railFacts = facts as Readonly<Record<UsdtRail, ChainRailFacts>> & Readonly<Record<'MOBILE_MONEY', RailFacts>>;

/** Every rail id, the built-in ones first, then those registered at boot. */
const ids: RailId[] = [...builtInRailIds];
export const allRails = (): readonly RailId[] => ids;

/** Whether a value names a rail of this process (built-in or registered at boot). */
export function isRailId(value: unknown): value is RailId {
  return typeof value === 'string' && Object.hasOwn(facts, value);
}

/** The rails a chain is read for (every rail but the prompted ones). */
export const usdtRails: readonly UsdtRail[] = ids.filter((id): id is UsdtRail => railFacts[id].endpoints !== undefined);

/** Decimals of each rail's token. */
export const railDecimals: Readonly<Record<RailId, number>> = Object.fromEntries(ids.map((id) => [id, railFacts[id].decimals])) as Record<RailId, number>;

/** Short network names (TRON, BSC, ETH, POLYGON, SOL) as invoices and transfer events name them. */
export const usdtNetworks: readonly string[] = usdtRails.map((r) => railFacts[r].network);
export const railOfNetwork = (network: string): UsdtRail | undefined => usdtRails.find((r) => railFacts[r].network === network);

let sealed = false;

/**
 * Closes the rail set: called once the process starts reading it for its configuration
 * (config/config.ts `loadConfig`), after which a registration would leave settings, watchers and
 * schemas that never heard of the rail.
 */
export function sealRails(): void {
  sealed = true;
}

export const railSetSealed = (): boolean => sealed;

/**
 * Adds a rail's facts (rails/register.ts `registerRail` calls it with the rail's method and
 * adapter). Refused once the set is sealed, for an id taken, or for facts that do not say where the
 * rail is read.
 */
export function addRailFacts(f: RailFacts): void {
  if (sealed) throw new Error(`rail ${f.id} registered after the rail set was sealed (register rails before loadConfig)`);
  if (isRailId(f.id)) throw new Error(`rail ${f.id} is registered already`);
  if (!/^[A-Z][A-Z0-9_]{2,31}$/.test(f.id)) throw new Error(`rail id ${f.id} must be upper-case letters, digits and underscores`);
  facts[f.id] = f;
  ids.push(f.id);
  (railDecimals as Record<string, number>)[f.id] = f.decimals;
  if (f.endpoints !== undefined) {
    (usdtRails as UsdtRail[]).push(f.id as UsdtRail);
    if (f.network !== undefined) (usdtNetworks as string[]).push(f.network);
  }
}

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
  return ids.filter((id) => has[railFacts[id].requires]);
}

/**
 * What the link workflow needs of a rail, from its facts: the decimals of its amounts, the
 * currency they count in and whether its payments are prompts. The service hands these to the
 * workflow in its input (`railTerms`); for a history recorded before that field, the workflow
 * reads them here (built-in rails only: the sandbox knows no other).
 */
export function linkRailTerms(rail: RailId): LinkRailTerms | undefined {
  const f = (facts as Record<string, RailFacts | undefined>)[rail];
  if (!f) return undefined;
  return { decimals: f.decimals, currency: f.tokenSymbol === 'KES' ? 'KES' : 'USDT', prompted: f.prompted === true };
}

/** The first prompted rail of the registry (M-Pesa's): where a link's prompts are recorded when it names none itself (histories before `railTerms`). */
export const defaultPromptRail = (): RailId | undefined => ids.find((id) => facts[id]!.prompted === true);
