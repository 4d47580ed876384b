/**
 * What each EVM RPC answered to `eth_chainId`, checked at start (worker and API). An RPC whose
 * chain id differs from the rail's configured one (`CHAIN_ID_<RAIL>_<ENV>`, defaulting to the
 * public network's) is never used: a node of another network could neither show a real payment
 * nor be trusted not to show a false one. Process-wide, filled by `checkChainIds` at start.
 */
export interface ChainIdVerdict {
  expected: number;
  /** What the RPC answered; undefined when it could not be asked (then it is retried, and used). */
  actual: number | undefined;
}

const verdicts = new Map<string, ChainIdVerdict>();

/** Records what one RPC answered. */
export function recordChainId(url: string, verdict: ChainIdVerdict): void {
  verdicts.set(url, verdict);
}

/** True when the RPC answered a chain id other than the one expected. */
export function isOnWrongChain(url: string): boolean {
  const v = verdicts.get(url);
  return v !== undefined && v.actual !== undefined && v.actual !== v.expected;
}

/** The URLs of a rail that may be used: every one not known to be on another chain, in order. */
export function usableRpcUrls(urls: readonly string[]): string[] {
  return urls.filter((u) => !isOnWrongChain(u));
}

/** Every verdict so far (for readiness and start-up logs; callers must not show URLs, which may carry keys). */
export function chainIdVerdicts(): ReadonlyMap<string, ChainIdVerdict> {
  return verdicts;
}
