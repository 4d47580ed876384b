/**
 * How the watchers read nodes they cannot fully trust to answer. A read that fails (an HTTP
 * error, a timeout, a malformed body, an answer that does not fit the question, a lagging node
 * that has not got the block yet) says nothing about the chain: it is tried again a few times
 * with backoff, and if it still fails, whatever it would have decided waits for the next tick.
 */
export interface ReadRetry {
  attempts: number;
  /** The wait before the second attempt; it doubles after each further one. */
  backoffMs: number;
  /** No attempt starts after this instant (epoch ms), so a tick ends well inside its activity timeout. */
  deadlineMs: number;
}

/**
 * The value of `read`, or undefined when every attempt threw or returned undefined (the read's
 * way of saying "this answer is unusable"). Never throws.
 */
export async function retryRead<T>(read: () => Promise<T | undefined>, retry: ReadRetry): Promise<T | undefined> {
  for (let attempt = 1; ; attempt++) {
    try {
      const value = await read();
      if (value !== undefined) return value;
    } catch {
      // Not evidence of anything; tried again below.
    }
    const waitMs = retry.backoffMs * 2 ** (attempt - 1);
    if (attempt >= retry.attempts || Date.now() + waitMs >= retry.deadlineMs) return undefined;
    await new Promise((resolve) => setTimeout(resolve, waitMs));
  }
}

/** `fn` over every item, at most `limit` at a time, results in the items' order. */
export async function inParallel<T, R>(items: readonly T[], limit: number, fn: (item: T) => Promise<R>): Promise<R[]> {
  const results: R[] = new Array(items.length);
  let next = 0;
  const worker = async () => {
    while (next < items.length) {
      const i = next++;
      results[i] = await fn(items[i]!);
    }
  };
  await Promise.all(Array.from({ length: Math.min(limit, items.length) }, worker));
  return results;
}
