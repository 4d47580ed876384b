import type { Environment } from '../domain/environment.js';
import type { UsdtRail } from '../domain/rails.js';
import type { RailEndpoint } from '../rails/facts.js';
import { methodOf } from '../rails/methods.js';
import { railFacts, usdtRails } from '../rails/registry.js';
import { defaultRailSettings, type RailSettings, type UsdtRailSettings } from '../rails/settings.js';

/**
 * The per-rail settings, parsed once at boot: `RPC_URL_<RAIL>_<ENV>`, `USDT_CONTRACT_<RAIL>_<ENV>`
 * (e.g. `RPC_URL_USDT_BSC_TEST`) and `CONFIRMATIONS_<RAIL>` over the rails' public defaults. The
 * RPC is TronGrid-compatible HTTP for TRON and JSON-RPC for the EVM chains and Solana. Public
 * endpoints are rate-limited: production should set its own.
 */
const envSuffix: Record<Environment, string> = { test: 'TEST', live: 'LIVE' };

/** The settings of every USDT rail from the (already checked) override variables. */
export function railSettingsFrom(overrides: Readonly<Record<string, string>>): RailSettings {
  const defaults = defaultRailSettings();
  const entries = usdtRails.map((rail): [UsdtRail, UsdtRailSettings] => {
    const endpoint = (env: Environment): RailEndpoint => {
      const suffix = `${rail}_${envSuffix[env]}`;
      const fallback = defaults[rail].endpoints[env];
      const listed = overrides[`RPC_URL_${suffix}`];
      const rpcUrls = listed === undefined ? [fallback.rpcUrl] : splitRpcList(listed);
      const chainId = overrides[`CHAIN_ID_${suffix}`];
      return Object.freeze({
        rpcUrl: rpcUrls[0]!,
        rpcUrls: Object.freeze(rpcUrls),
        usdtContract: overrides[`USDT_CONTRACT_${suffix}`] ?? fallback.usdtContract,
        chainId: chainId === undefined ? railFacts[rail].chainIds?.[env] : Number(chainId),
        sweepDelegate: sweepDelegate(overrides[`SWEEP_DELEGATE_${suffix}`], fallback.sweepDelegate),
      });
    };
    const depth = overrides[`CONFIRMATIONS_${rail}`];
    return [rail, Object.freeze({
      endpoints: Object.freeze({ test: endpoint('test'), live: endpoint('live') }),
      confirmations: depth === undefined ? undefined : Number(depth),
    })];
  });
  return Object.freeze(Object.fromEntries(entries)) as RailSettings;
}

/** `SWEEP_DELEGATE_<RAIL>_<ENV>`: an address over the rail's default, or `none` for no sponsored sweep plans. */
function sweepDelegate(value: string | undefined, fallback: string | undefined): string | undefined {
  if (value === undefined) return fallback;
  return value === 'none' ? undefined : value;
}

/** `RPC_URL_<RAIL>_<ENV>` is a comma-separated list, in failover order; blanks around commas are ignored. */
export function splitRpcList(value: string): string[] {
  return value.split(',').map((u) => u.trim()).filter((u) => u.length > 0);
}

// Built when asked: the rail set is final only once the composition root registered its own rails.
const railAlternatives = () => usdtRails.join('|');
const namePattern = () => new RegExp(`^(RPC_URL|USDT_CONTRACT|CHAIN_ID|SWEEP_DELEGATE)_(${railAlternatives()})_(TEST|LIVE)$`);
const confirmationsPattern = () => new RegExp(`^CONFIRMATIONS_(${railAlternatives()})$`);

/** What a contract override must be, as the rail's payment method says (rails/<family>/method.ts). */
const contractProblem = (rail: UsdtRail, value: string): string | null => methodOf(rail).contractProblem(value);

/** Misspelt names and malformed values of the RPC/contract overrides, reported at boot. */
export function railEndpointProblems(overrides: Readonly<Record<string, string>>): string[] {
  const problems: string[] = [];
  const names = namePattern();
  const confirmations = confirmationsPattern();
  for (const [name, value] of Object.entries(overrides)) {
    if (name.startsWith('CONFIRMATIONS_')) {
      if (!confirmations.test(name)) problems.push(`${name}: unknown setting; the pattern is CONFIRMATIONS_<RAIL>, e.g. CONFIRMATIONS_USDT_BSC`);
      else if (!/^[1-9]\d{0,4}$/.test(value)) problems.push(`${name}: must be a whole number of blocks from 1 to 99999`);
      continue;
    }
    if (!/^(RPC_URL|USDT_CONTRACT|CHAIN_ID|SWEEP_DELEGATE)_/.test(name)) continue;
    const m = names.exec(name);
    if (!m) {
      problems.push(`${name}: unknown setting; the pattern is RPC_URL_<RAIL>_<ENV>, USDT_CONTRACT_<RAIL>_<ENV> or CHAIN_ID_<RAIL>_<ENV>, e.g. RPC_URL_USDT_BSC_TEST`);
    } else if (m[1] === 'RPC_URL') {
      const urls = splitRpcList(value);
      if (urls.length === 0 || urls.some((u) => !/^(https?|wss?):\/\/[^\s,]+$/.test(u))) {
        problems.push(`${name}: must be an http(s) or ws(s) URL, or several separated by commas`);
      } else if (urls.length > 5) {
        problems.push(`${name}: at most 5 RPC URLs per rail`);
      } else if (new Set(urls).size !== urls.length) {
        problems.push(`${name}: lists the same URL twice`);
      }
    } else if (m[1] === 'CHAIN_ID') {
      if (!methodOf(m[2] as UsdtRail).takesChainId) problems.push(`${name}: only the EVM rails (BSC, Ethereum, Polygon) take a chain id`);
      else if (!/^[1-9]\d{0,15}$/.test(value) || !Number.isSafeInteger(Number(value))) problems.push(`${name}: must be a positive whole number (an EIP-155 chain id)`);
    } else if (m[1] === 'SWEEP_DELEGATE') {
      if (!methodOf(m[2] as UsdtRail).takesChainId) problems.push(`${name}: only the EVM rails (BSC, Ethereum, Polygon) take an EIP-7702 delegate`);
      else if (value !== 'none' && contractProblem(m[2] as UsdtRail, value)) problems.push(`${name}: must be ${contractProblem(m[2] as UsdtRail, value)}, or none`);
    } else if (m[1] === 'USDT_CONTRACT') {
      const expected = contractProblem(m[2] as UsdtRail, value);
      if (expected) problems.push(`${name}: must be ${expected}`);
    }
  }
  return problems;
}
