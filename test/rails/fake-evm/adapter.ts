import { readErc20Balance } from '../../../rails/evm/client.js';
import { scanEvmTick } from '../../../rails/evm/scan-tick.js';
import { evmChainView, evmDialect } from '../../../rails/evm/watch-view.js';
import type { RailAdapter } from '../../../rails/payment-method.js';
import { fakeEvmMethod } from './method.js';

/**
 * The fake family's adapter: its rules and the EVM scanner reading its own rail's RPCs and token
 * (`evmChainView` takes the rail's settings), over the EVM watch set the link's address is in. No
 * reconciliation view: the reconciler leaves the rail alone.
 */
export const fakeEvmAdapter: RailAdapter = {
  ...fakeEvmMethod,
  scanTick: (ctx, rail, environment, cursor, nowMs) =>
    scanEvmTick(ctx.pool, evmChainView(ctx, rail, environment, evmDialect), ctx.watchSet('evm', environment), cursor, nowMs),
  readBalance: (url, contract, address) => readErc20Balance(url, contract as `0x${string}`, address as `0x${string}`, { timeoutMs: 8_000, retryCount: 1 }),
};
