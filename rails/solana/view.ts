import { ApplicationFailure } from '@temporalio/activity';
import { Connection } from '@solana/web3.js';
import type { Environment } from '../../domain/environment.js';
import { railEndpoint, type RailSettings } from '../settings.js';
import type { SolanaChainView } from './scan-tick.js';

/** A node that does not answer within this time fails the tick, which Temporal retries with backoff. */
const requestTimeoutMs = 20_000;

// One Connection per RPC URL for the life of the worker: it is stateless for HTTP calls, and
// making one per tick would only churn clients.
const connections = new Map<string, Connection>();

function connectionFor(rpcUrl: string): Connection {
  let c = connections.get(rpcUrl);
  if (!c) {
    c = new Connection(rpcUrl, {
      commitment: 'confirmed',
      // Rate limits are Temporal's to retry (with backoff and visibility), not a hidden sleep loop.
      disableRetryOnRateLimit: true,
      // Node's own fetch ignores http agents; a timeout is what a hung node needs.
      httpAgent: false,
      fetch: (input, init) => fetch(input, { ...init, signal: AbortSignal.timeout(requestTimeoutMs) }),
    });
    connections.set(rpcUrl, c);
  }
  return c;
}

/** The USDT_SOL rail in one environment: RPC_URL_USDT_SOL_<ENV> and the mint (USDT_CONTRACT_USDT_SOL_<ENV>). */
export function solanaView(rails: RailSettings, environment: Environment): SolanaChainView {
  const ep = railEndpoint(rails, 'USDT_SOL', environment);
  if (!ep.usdtContract) {
    // Retryable, like every chain-watcher failure: a non-retryable one would end the watcher (see ../index.ts).
    throw ApplicationFailure.retryable(`No USDT mint is known for USDT_SOL in ${environment}; set USDT_CONTRACT_USDT_SOL_${environment.toUpperCase()}.`, 'ChainNotConfigured');
  }
  return { rail: 'USDT_SOL', environment, connection: connectionFor(ep.rpcUrl), mint: ep.usdtContract };
}
