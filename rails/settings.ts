import type { Environment } from '../domain/environment.js';
import type { RailId, UsdtRail } from '../domain/rails.js';
import type { RailEndpoint } from './facts.js';
import { railFacts, usdtRails } from './registry.js';

/**
 * What a deployment set for one USDT rail, parsed once at boot (config/rail-settings.ts) from
 * `RPC_URL_<RAIL>_<ENV>`, `USDT_CONTRACT_<RAIL>_<ENV>` and `CONFIRMATIONS_<RAIL>` over the rail's
 * public defaults (rails/<family>/facts.ts). Test keys use testnets, live keys mainnets. An RPC URL
 * may carry a provider key, so URLs never appear in responses or logs.
 */
export interface UsdtRailSettings {
  readonly endpoints: Readonly<Record<Environment, RailEndpoint>>;
  /** Explicit depth in blocks; undefined leaves it to the chain (EVM `finalized`, TRON's rule). */
  readonly confirmations: number | undefined;
}

/** Every USDT rail's settings: what the chain parts are handed instead of the whole configuration. */
export type RailSettings = Readonly<Record<UsdtRail, UsdtRailSettings>>;

/** Daraja's two base URLs: the sandbox for test keys, production for live ones. */
export interface MpesaEndpoints {
  readonly sandboxUrl: string;
  readonly liveUrl: string;
}

/** The rails' public defaults with nothing overridden. */
export function defaultRailSettings(): RailSettings {
  return Object.freeze(
    Object.fromEntries(usdtRails.map((rail) => [rail, Object.freeze({ endpoints: railFacts[rail].endpoints, confirmations: undefined })])),
  ) as RailSettings;
}

/** The RPC URL and USDT contract (or mint) of a rail in an environment. */
export function railEndpoint(rails: RailSettings, rail: UsdtRail, env: Environment): RailEndpoint {
  return rails[rail].endpoints[env];
}

/** Every RPC URL of a rail in an environment, in failover order (never empty). */
export function railRpcUrls(rails: RailSettings, rail: UsdtRail, env: Environment): readonly string[] {
  const ep = railEndpoint(rails, rail, env);
  return ep.rpcUrls && ep.rpcUrls.length > 0 ? ep.rpcUrls : [ep.rpcUrl];
}

/** EVM rails: the chain id the RPCs must report and wallet URIs name; undefined for other families. */
export function railChainId(rails: RailSettings, rail: UsdtRail, env: Environment): number | undefined {
  return railEndpoint(rails, rail, env).chainId ?? railFacts[rail].chainIds?.[env];
}

/**
 * A USDT rail of the test environment with no token contract (or mint) known: no well-known test
 * token exists for it (Polygon Amoy, Solana devnet: research/chains.md §2) and the operator set
 * none. Test links may still offer it, but only `simulate-payment` pays it: the watcher could not
 * recognise a transfer, so none is started. In live mode such a rail is refused instead.
 */
export function isSimulatedOnly(rails: RailSettings, rail: RailId, env: Environment): boolean {
  return rail !== 'MOBILE_MONEY' && env === 'test' && !railEndpoint(rails, rail, env).usdtContract;
}

/** The rails of `offered` that are simulated only in `env` (see isSimulatedOnly). */
export function simulatedOnlyRails(rails: RailSettings, offered: readonly RailId[], env: Environment): RailId[] {
  return offered.filter((rail) => isSimulatedOnly(rails, rail, env));
}
