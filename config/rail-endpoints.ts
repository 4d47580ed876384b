import bs58 from 'bs58';
import { isAddress } from 'viem';
import type { Environment } from '../domain/environment.js';
import { isTronAddress } from '../domain/hd/address.js';
import type { RailId, UsdtRail } from '../domain/rails.js';
import type { RailEndpoint } from '../rails/facts.js';
import { railFacts, usdtRails } from '../rails/registry.js';
import type { Config } from './config.js';

/**
 * Where each USDT rail is read in each environment: `RPC_URL_<RAIL>_<ENV>` and
 * `USDT_CONTRACT_<RAIL>_<ENV>` (e.g. `RPC_URL_USDT_BSC_TEST`), else the rail's public defaults
 * (rails/<family>/facts.ts). Test keys use testnets, live keys mainnets. The RPC is
 * TronGrid-compatible HTTP for TRON and JSON-RPC for the EVM chains and Solana. Public endpoints
 * are rate-limited: production should set its own (a URL may carry a provider key, so URLs never
 * appear in responses or logs).
 */
export type { RailEndpoint };

const envSuffix: Record<Environment, string> = { test: 'TEST', live: 'LIVE' };

/** The RPC URL and USDT contract of a rail in an environment, overrides first. */
export function railEndpoint(config: Pick<Config, 'railOverrides'>, rail: UsdtRail, env: Environment): RailEndpoint {
  const suffix = `${rail}_${envSuffix[env]}`;
  const fallback = railFacts[rail].endpoints[env];
  return {
    rpcUrl: config.railOverrides[`RPC_URL_${suffix}`] ?? fallback.rpcUrl,
    usdtContract: config.railOverrides[`USDT_CONTRACT_${suffix}`] ?? fallback.usdtContract,
  };
}

const railAlternatives = usdtRails.join('|');
const namePattern = new RegExp(`^(RPC_URL|USDT_CONTRACT)_(${railAlternatives})_(TEST|LIVE)$`);
const confirmationsPattern = new RegExp(`^CONFIRMATIONS_(${railAlternatives})$`);

function contractProblem(rail: UsdtRail, value: string): string | null {
  const family = railFacts[rail].family;
  if (family === 'tron') return isTronAddress(value) ? null : 'a TRON base58 address (T…)';
  if (family === 'solana') {
    try {
      return bs58.decode(value).length === 32 ? null : 'a Solana mint address (base58, 32 bytes)';
    } catch {
      return 'a Solana mint address (base58, 32 bytes)';
    }
  }
  return isAddress(value, { strict: false }) ? null : 'an EVM address (0x and 40 hex digits)';
}

/** Misspelt names and malformed values of the RPC/contract overrides, reported at boot. */
export function railEndpointProblems(overrides: Readonly<Record<string, string>>): string[] {
  const problems: string[] = [];
  for (const [name, value] of Object.entries(overrides)) {
    if (name.startsWith('CONFIRMATIONS_')) {
      if (!confirmationsPattern.test(name)) problems.push(`${name}: unknown setting; the pattern is CONFIRMATIONS_<RAIL>, e.g. CONFIRMATIONS_USDT_BSC`);
      else if (!/^[1-9]\d{0,4}$/.test(value)) problems.push(`${name}: must be a whole number of blocks from 1 to 99999`);
      continue;
    }
    if (!/^(RPC_URL|USDT_CONTRACT)_/.test(name)) continue;
    const m = namePattern.exec(name);
    if (!m) {
      problems.push(`${name}: unknown setting; the pattern is RPC_URL_<RAIL>_<ENV> or USDT_CONTRACT_<RAIL>_<ENV>, e.g. RPC_URL_USDT_BSC_TEST`);
    } else if (m[1] === 'RPC_URL' && !/^(https?|wss?):\/\/[^\s]+$/.test(value)) {
      problems.push(`${name}: must be an http(s) or ws(s) URL`);
    } else if (m[1] === 'USDT_CONTRACT') {
      const expected = contractProblem(m[2] as UsdtRail, value);
      if (expected) problems.push(`${name}: must be ${expected}`);
    }
  }
  return problems;
}

/**
 * A USDT rail of the test environment with no token contract (or mint) known: no well-known test
 * token exists for it (Polygon Amoy, Solana devnet: research/chains.md §2) and the operator set
 * none. Test links may still offer it, but only `simulate-payment` pays it: the watcher could not
 * recognise a transfer, so none is started. In live mode such a rail is refused instead.
 */
export function isSimulatedOnly(config: Pick<Config, 'railOverrides'>, rail: RailId, env: Environment): boolean {
  return rail !== 'MOBILE_MONEY' && env === 'test' && !railEndpoint(config, rail, env).usdtContract;
}

/** The rails of `rails` that are simulated only in `env` (see isSimulatedOnly). */
export function simulatedOnlyRails(config: Pick<Config, 'railOverrides'>, rails: readonly RailId[], env: Environment): RailId[] {
  return rails.filter((rail) => isSimulatedOnly(config, rail, env));
}
