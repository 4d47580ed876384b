import { ApplicationFailure } from '@temporalio/activity';
import { Connection } from '@solana/web3.js';
import type { Environment } from '../../domain/environment.js';
import type { Logger } from 'pino';
import { describeFailure, providerBook, type ProviderBook } from '../chain/providers.js';
import { railEndpoint, railRpcUrls, type RailSettings } from '../settings.js';
import type { SolanaChainView } from './scan-tick.js';

/** A node that does not answer within this time fails the tick, which Temporal retries with backoff. */
const requestTimeoutMs = 20_000;

// One Connection per list of RPC URLs for the life of the worker: it is stateless for HTTP calls,
// and making one per tick would only churn clients.
const connections = new Map<string, Connection>();

/**
 * Every request of the Connection, tried on each RPC of the list in turn (the healthy ones first,
 * rails/chain/providers.ts) until one answers: an RPC that cannot be reached, times out or answers
 * an HTTP error (5xx, 429) hands the request to the next. An answer, even a JSON-RPC error, is
 * final. Solana is not cross-checked between providers: its watcher reads each open link's
 * reference and settles by the cluster's own finality (`finalized`), see docs/solana.md.
 */
function failoverFetch(urls: readonly string[], book: ProviderBook): typeof fetch {
  return async (_input, init) => {
    let failure: unknown;
    let refused: Response | undefined;
    for (const p of book.order(Date.now())) {
      try {
        const res = await fetch(urls[p]!, { ...init, signal: AbortSignal.timeout(requestTimeoutMs) });
        if (res.status < 500 && res.status !== 429) {
          book.answered(p, Date.now());
          return res;
        }
        refused = res;
        if (urls.length > 1) book.report(p, 'erroring', `HTTP ${res.status}`, Date.now());
      } catch (err) {
        failure = err;
        if (urls.length > 1) book.report(p, 'erroring', describeFailure(err), Date.now());
      }
    }
    if (refused) return refused;
    throw failure;
  };
}

function connectionFor(urls: readonly string[], book: ProviderBook): Connection {
  const key = urls.join(',');
  let c = connections.get(key);
  if (!c) {
    c = new Connection(urls[0]!, {
      commitment: 'confirmed',
      // Rate limits are Temporal's to retry (with backoff and visibility), not a hidden sleep loop.
      disableRetryOnRateLimit: true,
      // Node's own fetch ignores http agents; a timeout is what a hung node needs.
      httpAgent: false,
      fetch: failoverFetch(urls, book),
    });
    connections.set(key, c);
  }
  return c;
}

/** The USDT_SOL rail in one environment: RPC_URL_USDT_SOL_<ENV> (a list, in failover order) and the mint (USDT_CONTRACT_USDT_SOL_<ENV>). */
export function solanaView(rails: RailSettings, environment: Environment, logger?: Pick<Logger, 'warn' | 'info'>): SolanaChainView {
  const ep = railEndpoint(rails, 'USDT_SOL', environment);
  if (!ep.usdtContract) {
    // Retryable, like every chain-watcher failure: a non-retryable one would end the watcher (see ../index.ts).
    throw ApplicationFailure.retryable(`No USDT mint is known for USDT_SOL in ${environment}; set USDT_CONTRACT_USDT_SOL_${environment.toUpperCase()}.`, 'ChainNotConfigured');
  }
  const urls = railRpcUrls(rails, 'USDT_SOL', environment);
  return { rail: 'USDT_SOL', environment, connection: connectionFor(urls, providerBook('USDT_SOL', environment, urls, logger)), mint: ep.usdtContract };
}
