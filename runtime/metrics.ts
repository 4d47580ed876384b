import { createServer, type Server } from 'node:http';
import { Counter, Gauge, Histogram, Registry, collectDefaultMetrics, type Metric } from 'prom-client';
import type { Logger } from 'pino';
import type { Metrics } from '../domain/metrics.js';
import { onProviderReport, providerHealth } from '../rails/chain/providers.js';

/** One process's metrics: prom-client's registry, its process metrics, and the recorder the parts are handed. */
export interface MetricsRegistry {
  readonly registry: Registry;
  readonly metrics: Metrics;
  /** The text exposition and its content type, as Prometheus scrapes it. */
  render(): Promise<{ contentType: string; body: string }>;
}

/** Seconds, from a fast read to a slow chain confirmation. */
const httpBuckets = [0.001, 0.0025, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10];
const confirmationBuckets = [1, 5, 15, 30, 60, 120, 300, 600, 1200, 1800, 3600, 7200, 21_600, 86_400];

/**
 * Builds the registry with the product's metrics (docs/operations.md lists them). Every label is
 * from a bounded set: a rail, an environment, a route pattern, a status code, an outcome, a
 * provider's position in its list.
 */
export function createMetricsRegistry(): MetricsRegistry {
  const registry = new Registry();
  collectDefaultMetrics({ register: registry, prefix: 'malipo_' });
  const registers = [registry];
  const httpRequests = new Counter({ name: 'malipo_http_requests_total', help: 'HTTP answers by method, route pattern and status code', labelNames: ['method', 'route', 'status'], registers });
  const httpSeconds = new Histogram({ name: 'malipo_http_request_duration_seconds', help: 'HTTP answer time by method, route pattern and status class', labelNames: ['method', 'route', 'status_class'], buckets: httpBuckets, registers });
  const links = new Counter({ name: 'malipo_payment_links_total', help: 'Payment links created, confirmed, expired and cancelled, by rail and environment', labelNames: ['event', 'rail', 'environment'], registers });
  const fromCreation = new Histogram({ name: 'malipo_link_confirmation_seconds', help: 'Seconds from a link\'s creation to CONFIRMED, by rail', labelNames: ['rail'], buckets: confirmationBuckets, registers });
  const fromEvidence = new Histogram({ name: 'malipo_link_evidence_to_confirmation_seconds', help: 'Seconds from a link\'s first evidence to CONFIRMED, by rail', labelNames: ['rail'], buckets: confirmationBuckets, registers });
  const deposits = new Counter({ name: 'malipo_chain_deposits_total', help: 'On-chain deposits told seen, confirmed and dropped (reorganised away), by rail and environment', labelNames: ['event', 'rail', 'environment'], registers });
  const head = new Gauge({ name: 'malipo_chain_head_block', help: 'The chain head a watcher last read', labelNames: ['rail', 'environment'], registers });
  const cursor = new Gauge({ name: 'malipo_chain_cursor_block', help: 'The block a watcher has scanned to', labelNames: ['rail', 'environment'], registers });
  const lag = new Gauge({ name: 'malipo_chain_lag_blocks', help: 'Blocks between the head and a watcher\'s cursor', labelNames: ['rail', 'environment'], registers });
  const lagSeconds = new Gauge({ name: 'malipo_chain_lag_seconds', help: 'Seconds of chain time between the head and a watcher\'s cursor: the lag in blocks times the rail\'s nominal block time', labelNames: ['rail', 'environment'], registers });
  const tickedAt = new Gauge({ name: 'malipo_chain_last_tick_timestamp_seconds', help: 'When a watcher last read its chain (Unix seconds): time() minus this is how stale it is', labelNames: ['rail', 'environment'], registers });
  const providerReports = new Counter({ name: 'malipo_chain_provider_reports_total', help: 'RPC providers reported lagging, erring or disagreeing, and failovers (sidelined), by rail, environment and position in the list', labelNames: ['event', 'rail', 'environment', 'position'], registers });
  new Gauge({
    name: 'malipo_chain_provider_sidelined',
    help: '1 while a provider is sidelined (asked last), by rail, environment and position',
    labelNames: ['rail', 'environment', 'position'],
    registers,
    collect() {
      this.reset();
      const now = Date.now();
      for (const book of providerHealth()) {
        for (const p of book.providers) {
          const sidelined = p.sidelinedUntil !== null && Date.parse(p.sidelinedUntil) > now;
          this.set({ rail: book.rail, environment: book.environment, position: String(p.index) }, sidelined ? 1 : 0);
        }
      }
    },
  });
  const webhooks = new Counter({ name: 'malipo_webhook_attempts_total', help: 'Webhook delivery attempts by outcome', labelNames: ['outcome'], registers });
  const stk = new Counter({ name: 'malipo_mpesa_stk_total', help: 'M-Pesa STK pushes, callbacks and STK queries (by result code) and prompt settlements, by step and result', labelNames: ['step', 'result'], registers });
  const exhausted = new Counter({ name: 'malipo_webhook_deliveries_exhausted_total', help: 'Webhook deliveries that ran out of attempts', registers });
  const disabled = new Counter({ name: 'malipo_webhook_endpoints_disabled_total', help: 'Webhook endpoints Malipo disabled, by reason (gone: a 410; failing: nothing reached it for a whole delivery)', labelNames: ['reason'], registers });
  const findings = new Counter({ name: 'malipo_reconciliation_findings_total', help: 'Reconciliation findings by rail and kind', labelNames: ['rail', 'kind'], registers });
  const conflicts = new Counter({ name: 'malipo_idempotency_conflicts_total', help: 'Idempotency-Key refusals by error code', labelNames: ['code'], registers });
  const refusals = new Counter({ name: 'malipo_rate_limit_refusals_total', help: 'Requests refused with 429 by route pattern', labelNames: ['route'], registers });

  const metrics: Metrics = {
    httpRequest(method, route, statusCode, seconds) {
      httpRequests.inc({ method, route, status: String(statusCode) });
      httpSeconds.observe({ method, route, status_class: `${Math.floor(statusCode / 100)}xx` }, seconds);
      if (statusCode === 429) refusals.inc({ route });
    },
    link: (event, rail, environment) => links.inc({ event, rail, environment }),
    linkConfirmedAfter(rail, fromCreationSeconds, fromEvidenceSeconds) {
      fromCreation.observe({ rail }, Math.max(0, fromCreationSeconds));
      if (fromEvidenceSeconds !== undefined) fromEvidence.observe({ rail }, Math.max(0, fromEvidenceSeconds));
    },
    deposits: (event, rail, environment, count) => void (count > 0 && deposits.inc({ event, rail, environment }, count)),
    watcherPosition(rail, environment, headBlock, cursorBlock, blockSeconds) {
      const behind = Number(headBlock > cursorBlock ? headBlock - cursorBlock : 0n);
      head.set({ rail, environment }, Number(headBlock));
      cursor.set({ rail, environment }, Number(cursorBlock));
      lag.set({ rail, environment }, behind);
      lagSeconds.set({ rail, environment }, behind * blockSeconds);
      tickedAt.set({ rail, environment }, Date.now() / 1000);
    },
    provider: (event, rail, environment, position) => providerReports.inc({ event, rail, environment, position: String(position) }),
    stk: (step, result) => stk.inc({ step, result }),
    webhookAttempt: (outcome) => webhooks.inc({ outcome }),
    webhookDeliveryExhausted: () => exhausted.inc(),
    webhookEndpointDisabled: (reason) => disabled.inc({ reason }),
    reconciliationFindings: (rail, kind, count) => void (count > 0 && findings.inc({ rail, kind }, count)),
    idempotencyConflict: (code) => conflicts.inc({ code }),
  };
  onProviderReport((rail, environment, position, state, sidelined) => {
    metrics.provider(state === 'erroring' ? 'error' : state === 'disagreeing' ? 'disagreement' : 'lag', rail, environment, position);
    if (sidelined) metrics.provider('failover', rail, environment, position);
  });
  return {
    registry,
    metrics,
    render: async () => ({ contentType: registry.contentType, body: await registry.metrics() }),
  };
}

/** A backlog as the database holds it: how many wait, and the age of the oldest in seconds (0 when none). */
export interface Backlog {
  count: number;
  oldestSeconds: number;
}
/** Links and invoices whose workflow has not started. */
export type UnstartedBacklog = Backlog;

/**
 * Two gauges (the count and the oldest's age) read at each scrape with `read` (one indexed query)
 * in a process with a database pool. A failing read never fails the scrape: the gauges are left
 * out of it, and the first failure of a streak is logged.
 */
function countBacklog(
  source: MetricsRegistry,
  gauges: { count: { name: string; help: string }; oldest: { name: string; help: string }; what: string },
  read: () => Promise<Backlog>,
  logger?: Pick<Logger, 'warn'>,
): void {
  let last: Promise<Backlog | undefined> | undefined;
  let failing = false;
  // Both gauges collect from one read per scrape: prom-client asks every metric in one synchronous
  // loop, so a read is shared until the next microtask and never reused by a later scrape.
  const readOnce = () => {
    if (last) return last;
    last = read().then(
      (backlog) => ((failing = false), backlog),
      (err: unknown) => {
        if (!failing) logger?.warn({ err }, `could not count ${gauges.what}; the scrape goes on without it`);
        failing = true;
        return undefined;
      },
    );
    queueMicrotask(() => (last = undefined));
    return last;
  };
  // A gauge of its own making: prom-client's Gauge without labels always shows a value (0 after a
  // reset), and 0 would claim there is no backlog when it could not be read.
  const gauge = ({ name, help }: { name: string; help: string }, pick: (b: Backlog) => number) => {
    const collect = async () => {
      const backlog = await readOnce();
      return { name, help, type: 'gauge', aggregator: 'sum', values: backlog ? [{ value: pick(backlog), labels: {} }] : [] };
    };
    source.registry.registerMetric({ name, help, type: 'gauge', aggregator: 'sum', get: collect, reset() {} } as unknown as Metric);
  };
  gauge(gauges.count, (b) => b.count);
  gauge(gauges.oldest, (b) => b.oldestSeconds);
}

/** `malipo_link_workflows_unstarted` and `..._oldest_seconds`: links and invoices whose workflow has not started. */
export function countUnstartedLinks(source: MetricsRegistry, read: () => Promise<UnstartedBacklog>, logger?: Pick<Logger, 'warn'>): void {
  countBacklog(source, {
    count: { name: 'malipo_link_workflows_unstarted', help: 'Links and invoices created over 60 s ago whose workflow has not started' },
    oldest: { name: 'malipo_link_workflows_unstarted_oldest_seconds', help: 'Age in seconds of the oldest link or invoice whose workflow has not started (0 when none waits over 60 s)' },
    what: 'the links whose workflow has not started',
  }, read, logger);
}

/**
 * `malipo_webhook_outbox_undispatched` and `..._oldest_seconds`: webhook events written over a
 * minute ago that no dispatcher has finished (the outbox relay sends an event within a fraction
 * of a second, the sweeper within about a minute and a half).
 */
export function countUndispatchedEvents(source: MetricsRegistry, read: () => Promise<Backlog>, logger?: Pick<Logger, 'warn'>): void {
  countBacklog(source, {
    count: { name: 'malipo_webhook_outbox_undispatched', help: 'Webhook events written over 60 s ago that are not dispatched yet' },
    oldest: { name: 'malipo_webhook_outbox_undispatched_oldest_seconds', help: 'Age in seconds of the oldest webhook event not dispatched yet (0 when none waits over 60 s)' },
    what: 'the webhook events not dispatched yet',
  }, read, logger);
}

/**
 * A worker's own metrics port (WORKER_METRICS_PORT): `GET /metrics` and nothing else. It listens
 * where the operator points it (bind it to a private interface); the numbers carry no secret.
 */
export async function serveMetrics(source: MetricsRegistry, host: string, port: number): Promise<Server> {
  const server = createServer((req, res) => {
    if (req.method !== 'GET' || (req.url ?? '').split('?')[0] !== '/metrics') {
      res.writeHead(404, { 'content-type': 'text/plain' }).end('not found\n');
      return;
    }
    source.render().then(
      ({ contentType, body }) => res.writeHead(200, { 'content-type': contentType }).end(body),
      () => res.writeHead(500, { 'content-type': 'text/plain' }).end('metrics unavailable\n'),
    );
  });
  await new Promise<void>((resolve, reject) => server.once('error', reject).listen(port, host, () => resolve()));
  return server;
}
