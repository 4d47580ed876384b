import type { ChainIdStatus } from '../../rails/evm/chain-id-check.js';
import type { ProviderHealth } from '../../rails/chain/providers.js';
import type { WatcherFailure } from '../../rails/chain/watcher-positions.js';

/** One named check of GET /ready (services/system/readiness.ts), and what a chain check carries. */
export interface ReadinessCheck {
  /** What is checked: `database`, `migrations`, `temporal`, `redis`, `chain-id:<RAIL>:<env>`, `providers:<RAIL>:<env>`, `watcher:<RAIL>:<env>`. */
  name: string;
  ok: boolean;
  /** What was found, for people; never a URL or host. */
  detail: string;
  /** `chain-id:` checks: what each RPC of the rail answered to eth_chainId. */
  chainId?: ChainIdStatus;
  /** `providers:` checks: each RPC (by position, never its URL or host) as this process's chain watchers last found it. */
  providers?: Omit<ProviderHealth, 'host'>[];
  /** `watcher:` checks: where the watcher stands and its bounds. */
  watcher?: WatcherStatus;
}

/** Where a watcher stands, as GET /ready shows it. */
export interface WatcherStatus {
  headBlock: number | null;
  readToBlock: number | null;
  lagBlocks: number | null;
  /** Seconds since the chain was last read, by this process or (from the saved cursor) another worker; null before the first read. */
  lastReadSecondsAgo: number | null;
  /** Why this process's latest tick failed; null when it succeeded. */
  failing: WatcherFailure | null;
  bounds: { staleSeconds: number; lagBlocks: number };
}
