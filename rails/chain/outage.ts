import type { Logger } from 'pino';

/**
 * A node that cannot be reached at all (refused, unknown host, no route, timed out) is an outage,
 * not a bad answer: nothing was read, so nothing is decided. Failing the tick would make Temporal
 * log a stack trace for every retry of every watcher for as long as the machine is offline. So a
 * tick that meets one reports it as a result with a backoff (the watcher sleeps and tries again,
 * its cursor unchanged), and the log says so once when the outage starts, at most every
 * `remindEveryMs` while it lasts, and once when the node answers again. Any other failure (a
 * malformed answer, an HTTP error, a database problem) still fails the tick and is retried by
 * Temporal as before.
 */
const unreachableCodes = new Set([
  'ECONNREFUSED', 'ENOTFOUND', 'EAI_AGAIN', 'ECONNRESET', 'ETIMEDOUT', 'EHOSTUNREACH', 'ENETUNREACH', 'ENETDOWN', 'EPIPE',
  'UND_ERR_CONNECT_TIMEOUT', 'UND_ERR_SOCKET', 'UND_ERR_HEADERS_TIMEOUT',
]);

/** Whether `err` (or anything in its cause chain) says the node could not be reached. */
export function isUnreachable(err: unknown): boolean {
  let e: unknown = err;
  for (let depth = 0; e && typeof e === 'object' && depth < 8; depth++) {
    const { code, name, message } = e as { code?: unknown; name?: unknown; message?: unknown };
    if (typeof code === 'string' && unreachableCodes.has(code)) return true;
    if (name === 'TimeoutError' || name === 'TimeoutException') return true;
    if (typeof message === 'string' && /fetch failed|ECONNREFUSED|ENOTFOUND|EAI_AGAIN|request timed out|The operation was aborted due to timeout/i.test(message)) return true;
    e = (e as { cause?: unknown }).cause;
  }
  return false;
}

/** Waits between ticks while a node is unreachable: 1 s, doubling, at most 30 s (the activity retry policy's curve). */
export const outageBackoff = { firstMs: 1_000, maxMs: 30_000 };
const remindEveryMs = 10 * 60_000;

interface Outage {
  sinceMs: number;
  failures: number;
  loggedAtMs: number;
}

/** Outages per watcher (rail and environment) in this worker process. */
export class OutageLog {
  private readonly outages = new Map<string, Outage>();

  constructor(private readonly logger: Pick<Logger, 'warn' | 'info'> | undefined) {}

  /** Records a failed tick; returns how long the watcher should wait before the next one. */
  failed(key: string, err: unknown, nowMs: number): number {
    let o = this.outages.get(key);
    const reason = err instanceof Error ? err.message.split('\n')[0] : String(err);
    if (!o) {
      this.outages.set(key, (o = { sinceMs: nowMs, failures: 0, loggedAtMs: nowMs }));
      this.logger?.warn({ watcher: key, reason }, 'chain node unreachable; the watcher waits and retries (logged again only when it recovers or every 10 minutes)');
    } else if (nowMs - o.loggedAtMs >= remindEveryMs) {
      o.loggedAtMs = nowMs;
      this.logger?.warn({ watcher: key, reason, downForSeconds: Math.round((nowMs - o.sinceMs) / 1000), failedTicks: o.failures + 1 }, 'chain node still unreachable');
    }
    o.failures++;
    return Math.min(outageBackoff.firstMs * 2 ** (o.failures - 1), outageBackoff.maxMs);
  }

  /** Records a tick that read the node; logs the end of an outage once. */
  succeeded(key: string, nowMs: number): void {
    const o = this.outages.get(key);
    if (!o) return;
    this.outages.delete(key);
    this.logger?.info({ watcher: key, downForSeconds: Math.round((nowMs - o.sinceMs) / 1000), failedTicks: o.failures }, 'chain node reachable again');
  }
}
