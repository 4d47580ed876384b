import { getAddress } from 'viem';
import type { Environment } from '../../domain/environment.js';
import type { UsdtRail } from '../../domain/rails.js';
import { providerBook } from '../chain/providers.js';
import { RailNotConfiguredError, type ScanContext } from '../payment-method.js';
import { railEndpoint } from '../settings.js';
import { usableRailRpcUrls } from './chain-ids.js';
import { evmClient } from './client.js';
import type { EvmChainView } from './scan-tick.js';

/**
 * How a chain scanned by the EVM scanner differs from an EVM chain: TRON is read through
 * TronGrid's `/jsonrpc`, names its contract and addresses in base58 and has a solidified head
 * (rails/tron/adapter.ts). An EVM chain uses none of these.
 */
export interface EvmDialect {
  rpcUrl(url: string): string;
  solidifiedHead?(url: string): Promise<bigint>;
  tokenHex(contract: string): `0x${string}`;
  watchAddress(hex: `0x${string}`): string;
}

export const evmDialect: EvmDialect = {
  rpcUrl: (url) => url,
  tokenHex: (contract) => contract as `0x${string}`,
  watchAddress: (hex) => getAddress(hex),
};

/**
 * The rail's RPCs in failover order (those known to answer another chain id left out), each
 * with its health in the process-wide provider book (rails/chain/providers.ts).
 */
export function evmChainView(ctx: ScanContext, rail: UsdtRail, environment: Environment, dialect: EvmDialect): EvmChainView {
  const ep = railEndpoint(ctx.rails, rail, environment);
  if (!ep.usdtContract) {
    throw new RailNotConfiguredError(`No USDT contract is known for ${rail} in ${environment}; set USDT_CONTRACT_${rail}_${environment.toUpperCase()}.`);
  }
  const urls = usableRailRpcUrls(ctx.rails, rail, environment);
  if (urls.length === 0) throw new RailNotConfiguredError(`Every RPC of ${rail} in ${environment} answers another chain id (see the start-up log); set RPC_URL_${rail}_${environment.toUpperCase()}.`);
  const solidifiedHead = dialect.solidifiedHead;
  return {
    rail,
    environment,
    rpcs: urls.map((url) => ({
      client: evmClient(dialect.rpcUrl(url), { timeoutMs: 20_000, retryCount: 0 }),
      solidifiedHead: solidifiedHead ? () => solidifiedHead(url) : undefined,
    })),
    book: providerBook(rail, environment, urls, ctx.logger),
    token: dialect.tokenHex(ep.usdtContract),
    toWatchAddress: dialect.watchAddress,
    confirmations: ctx.rails[rail].confirmations,
  };
}
