import { httpCall, type HttpRequest, type HttpResponse } from '../../helpers/http.js';

/** What an API request needs besides the API process that answers it. */
export type Dependency = 'postgres' | 'temporal' | 'worker' | 'daraja';

/** A time when a dependency was down or faulty: from the fault until it answered its health probe again. */
export interface OutageWindow {
  fault: string;
  deps: Dependency[];
  from: number;
  to?: number;
}

/** A 5xx the API gave, with when it was asked and what it needed. */
export interface ServerError {
  what: string;
  status: number;
  deps: Dependency[];
  start: number;
  end: number;
  body: string;
}

/**
 * The scenario's record of outages and of the API's 5xx answers. A 5xx is excused only when its
 * request overlapped an outage of a dependency the request needs; any other 5xx (the API failing
 * while everything it uses was up, including after a restart had completed) counts as http5xx.
 */
export class Outages {
  readonly windows: OutageWindow[] = [];
  readonly serverErrors: ServerError[] = [];
  /** Every request that got no HTTP answer (refused, reset, timed out); `unexplainedUnanswered` picks those no outage explains. */
  readonly unanswered: Array<{ what: string; error: string; start: number; end: number; api: string }> = [];
  /** API-process downtime, per base URL: connection errors there are the outage itself. */
  readonly apiDown: Array<{ api: string; from: number; to?: number }> = [];

  open(fault: string, deps: Dependency[]): OutageWindow {
    const w: OutageWindow = { fault, deps, from: Date.now() };
    this.windows.push(w);
    return w;
  }

  close(w: OutageWindow): void {
    w.to = Date.now();
  }

  excused(e: Pick<ServerError, 'deps' | 'start' | 'end'>): OutageWindow | undefined {
    return this.windows.find((w) => w.deps.some((d) => e.deps.includes(d)) && w.from <= e.end && (w.to ?? Infinity) >= e.start);
  }

  apiWasDown(api: string, start: number, end: number): boolean {
    return this.apiDown.some((d) => d.api === api && d.from <= end && (d.to ?? Infinity) >= start);
  }

  /** The 5xx answers no outage explains. Call after every window closed. */
  unexcused(): ServerError[] {
    return this.serverErrors.filter((e) => !this.excused(e));
  }

  /** The unanswered requests no API-process outage explains (nor a dependency outage that hung the process). */
  unexplainedUnanswered() {
    return this.unanswered.filter((u) => !this.apiWasDown(u.api, u.start, u.end) && !this.excused({ deps: ['postgres', 'temporal', 'worker', 'daraja'], start: u.start, end: u.end }));
  }
}

export interface CallOptions extends HttpRequest {
  /** For the report: which call this is. */
  what: string;
  key?: string;
  deps: Dependency[];
  timeoutMs?: number;
}

/** The answer, or why there was none. */
export type CallResult = { ok: true; res: HttpResponse } | { ok: false; error: string };

/**
 * The merchant's and customers' HTTP client behind a load balancer: each call goes to one of
 * the API processes in turn (a dead one refuses the connection, as behind a balancer that has
 * not noticed yet); 5xx answers and unanswered requests are recorded in `outages`.
 */
export class BalancedClient {
  private next = 0;
  /** Requests on their way, per API base URL (what and method), so a kill can be aimed at one mid-request. */
  readonly inFlight = new Map<string, Set<{ what: string; method: string }>>();
  constructor(
    private readonly apis: () => string[],
    private readonly outages: Outages,
    /** A source address of its own, so the shared Redis rate limits of other test runs do not count. */
    private readonly localAddress: string,
  ) {}

  async once(opts: CallOptions): Promise<CallResult> {
    const urls = this.apis();
    const base = urls[this.next++ % urls.length]!;
    const start = Date.now();
    const { what, key, deps, timeoutMs, headers, ...req } = opts;
    const flight = { what, method: req.method };
    const flights = this.inFlight.get(base) ?? new Set();
    this.inFlight.set(base, flights.add(flight));
    try {
      const res = await withTimeout(
        httpCall(base, { ...req, localAddress: this.localAddress, headers: { ...(key ? { 'x-api-key': key } : {}), ...headers } }),
        timeoutMs ?? 90_000,
      );
      if (res.status >= 500) this.outages.serverErrors.push({ what, status: res.status, deps, start, end: Date.now(), body: res.text.slice(0, 300) });
      return { ok: true, res };
    } catch (err) {
      this.outages.unanswered.push({ what, error: (err as Error).message, start, end: Date.now(), api: base });
      return { ok: false, error: (err as Error).message };
    } finally {
      flights.delete(flight);
    }
  }

  /** An API process with a POST on its way right now, waiting up to `ms` for one. */
  async apiMidPost(ms: number): Promise<string | undefined> {
    const deadline = Date.now() + ms;
    for (;;) {
      const busy = [...this.inFlight.entries()].find(([, f]) => [...f].some((x) => x.method === 'POST'));
      if (busy || Date.now() > deadline) return busy?.[0];
      await sleep(5);
    }
  }

  /**
   * A client that retries as a real one does: on no answer, a 5xx, a 429 or an Idempotency-Key
   * still in progress, after a short wait (Retry-After when given, at most 3 s), until `deadlineMs`.
   * Returns the first other answer.
   */
  async retrying(opts: CallOptions, deadlineMs = 180_000): Promise<HttpResponse> {
    const deadline = Date.now() + deadlineMs;
    let last = '';
    for (;;) {
      const r = await this.once(opts);
      if (r.ok && !retryable(r.res)) return r.res;
      last = r.ok ? `${r.res.status} ${r.res.text.slice(0, 200)}` : r.error;
      if (Date.now() > deadline) throw new Error(`${opts.what}: no final answer within ${deadlineMs} ms (last: ${last})`);
      const after = r.ok ? Number(r.res.headers['retry-after']) : NaN;
      await sleep(Number.isFinite(after) && after > 0 ? Math.min(after * 1000, 3_000) : 500);
    }
  }
}

function retryable(res: HttpResponse): boolean {
  if (res.status >= 500 || res.status === 429) return true;
  return res.status === 409 && res.body?.error?.code === 'idempotency_request_in_progress';
}

export const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

function withTimeout<T>(p: Promise<T>, ms: number): Promise<T> {
  let timer: NodeJS.Timeout | undefined;
  return Promise.race([
    p.finally(() => clearTimeout(timer)),
    new Promise<never>((_, reject) => (timer = setTimeout(() => reject(new Error(`no answer within ${ms} ms`)), ms))),
  ]);
}
