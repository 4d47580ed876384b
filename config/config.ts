import { resolve } from 'node:path';
import { z } from 'zod';
import { parseKeyring, type Keyring } from '../domain/crypto/credentials.js';
import { parseAllowedNetworks } from '../domain/webhooks/address-policy.js';
import type { MpesaEndpoints, RailSettings } from '../rails/settings.js';
import { railEndpointProblems, railSettingsFrom } from './rail-settings.js';
import { sealRails } from '../rails/registry.js';
import { parseTrustProxy, type TrustProxy } from './trust-proxy.js';

/**
 * Every setting the service reads, parsed once at boot. No other module reads `process.env`, and
 * only the composition root (runtime/) imports this one: each part declares the settings it needs
 * (ServiceSettings, ActivitySettings, ApiSettings, RailSettings, …) and is handed the frozen
 * `Config`, which has them all. All problems are reported together.
 */
const optionalUrl = z.string().url().optional();

const envSchema = z.object({
  HOST: z.string().default('127.0.0.1'),
  PORT: z.coerce.number().int().min(0).max(65535).default(3000),
  PUBLIC_BASE_URL: optionalUrl,
  CHECKOUT_BASE_URL: optionalUrl,
  KEY_PREFIX: z.string().regex(/^[a-z]{1,8}$/, 'lowercase letters, 1 to 8').default('sk'),
  DASHBOARD_SIGNUP: z.enum(['open', 'closed']).default('open'), // closed: no self sign-up; stores come from `stores:create` and people from invitations
  API_KEY_CACHE_SECONDS: z.coerce.number().int().min(0).max(60).default(5), // a key's successful check is reused this long per process; a revocation elsewhere holds within it
  DATA_DIR: z.string().default('./data'),
  DATABASE_URL: z.string().optional(),
  // Named (prepared) statements per connection (db/pg-driver.ts); false behind a pooler that shares sessions (PgBouncer in transaction mode)
  DATABASE_PREPARED_STATEMENTS: z.enum(['true', 'false']).default('true'),
  TEMPORAL_ADDRESS: z.string().optional(),
  TEMPORAL_NAMESPACE: z.string().default('default'),
  TEMPORAL_PORT: z.coerce.number().int().default(7233),
  TEMPORAL_UI_PORT: z.coerce.number().int().default(8233),
  TEMPORAL_UI_URL: optionalUrl, // the Temporal Web UI the dashboard links workflows to; unset → the embedded dev server's, else no link
  TEMPORAL_CLI_PATH: z.string().optional(),
  TEMPORAL_CLI_DOWNLOAD_BASE: z.string().optional(), // where the first run downloads the pinned CLI from; `off`: build it with Go
  // The production topology on one machine (`npm run start:cluster`, docs/production.md).
  TEMPORAL_SERVER_PATH: z.string().optional(),
  TEMPORAL_SQL_TOOL_PATH: z.string().optional(),
  TEMPORAL_UI_SERVER_PATH: z.string().optional(),
  TEMPORAL_DATABASE: z.string().regex(/^[a-z_][a-z0-9_]{0,40}$/, 'a lowercase PostgreSQL database name').default('temporal'),
  CLUSTER_API_PROCESSES: z.coerce.number().int().min(1).max(16).default(2),
  CLUSTER_WORKER_PROCESSES: z.coerce.number().int().min(1).max(16).default(2),
  CLUSTER_METRICS_PORT: z.coerce.number().int().min(1).max(65_000).optional(), // start:cluster: worker slot i serves WORKER_METRICS_PORT base+2i and TEMPORAL_METRICS_PORT base+2i+1; unset → none
  TASK_QUEUE_PREFIX: z.string().regex(/^[\w.-]*$/).default(''),
  PGLITE_PORT: z.coerce.number().int().optional(),
  REDIS_URL: z.string().optional(),
  // One base64 key, or `keyId:base64,keyId:base64` (the first encrypts): see docs/mobile-money.md.
  ENCRYPTION_KEY: z
    .string()
    .optional()
    .transform((value, ctx): Keyring | undefined => {
      if (!value) return undefined;
      try {
        return parseKeyring(value);
      } catch (err) {
        ctx.addIssue({ code: z.ZodIssueCode.custom, message: (err as Error).message });
        return z.NEVER;
      }
    }),
  MPESA_SANDBOX_URL: z.string().url().default('https://sandbox.safaricom.co.ke'),
  MPESA_LIVE_URL: z.string().url().default('https://api.safaricom.co.ke'),
  TEST_KES_PER_USDT: z
    .string()
    .regex(/^\d+(\.\d{1,6})?$/, 'a positive decimal such as 130 or 129.5')
    .default('130'),
  RATE_URL: z.string().optional(),
  RATE_SOURCES: z.string().default('coingecko,coinbase'), // live USDT/KES sources: `coingecko`, `coinbase` or http(s) URLs, comma-separated (docs/rates.md)
  RATE_MIN_KES_PER_USDT: z.coerce.number().positive().default(50), // a live rate below this is refused
  RATE_MAX_KES_PER_USDT: z.coerce.number().positive().default(500), // a live rate above this is refused
  RATE_MAX_SPREAD_PERCENT: z.coerce.number().positive().max(50).default(2), // sources must agree within this
  RATE_MAX_JUMP_PERCENT: z.coerce.number().positive().max(100).default(10), // largest move from the last good rate of the past hour
  NATIVE_PRICE_SOURCES: z.string().default('coingecko,coinbase'), // live native-coin USD prices for sweep costs: `coingecko`, `coinbase`, either with `@<base URL>` (docs/rates.md)
  TEST_NATIVE_USD_PRICES: z.string().default(''), // fixed prices for test keys, e.g. `BNB=600,ETH=3000.5`; unset → test plans have no USD cost
  IDEMPOTENCY_LEASE_SECONDS: z.coerce.number().positive().max(600).default(30), // claim lease of an Idempotency-Key, renewed while the request runs
  WEBHOOK_RETRY_SCALE: z.coerce.number().positive().max(1).default(1), // shrinks every webhook timer; tests and demos only (docs/webhooks.md)
  WEBHOOK_DNS_SERVERS: z.string().optional(), // comma-separated `ip[:port]` that resolve live webhook hosts; unset → the system's resolv.conf
  // Private networks test-mode webhooks may reach: `loopback`, `private`, CIDRs, or `none`; unset → `loopback` in the embedded setup, else none (docs/webhooks.md).
  WEBHOOK_TEST_ALLOWED_NETWORKS: z.string().optional(),
  WEBHOOK_RELAY: z.enum(['on', 'off']).default('on'), // off: this process's webhooks workers run no outbox relay (another process does; docs/webhooks.md)
  WEBHOOK_RELAY_POLL_MS: z.coerce.number().int().min(10).max(60_000).default(100), // the outbox relay's pause when it found nothing to dispatch
  MPESA_QUERY_AFTER_SECONDS: z.coerce.number().int().min(1).max(600).default(30), // first STK query for a prompt whose callback has not come
  EVIDENCE_PULL_SECONDS: z.coerce.number().int().min(1).max(86_400).default(600), // how often an open link reads its recorded deposits unwoken
  LINK_HISTORY_EVENT_LIMIT: z.coerce.number().int().min(20).max(40_000).default(10_000), // a link's workflow continues as new past this many events
  CHAIN_WATCHERS: z.enum(['on', 'off']).default('on'), // off: never start chain watchers (M-Pesa-only or offline deployments)
  CHAIN_POLL_MS: z.coerce.number().int().min(10).max(600_000).optional(), // caught-up watchers' poll interval; default per chain
  READY_CHAIN_STALE_SECONDS: z.coerce.number().int().min(1).max(86_400).optional(), // GET /ready: longest time a watcher may go without reading its chain; default 10 poll intervals, at least 60 s (docs/operations.md)
  READY_CHAIN_LAG_BLOCKS: z.coerce.number().int().min(1).max(100_000_000).optional(), // GET /ready: most blocks a watcher may trail the head; default per chain (docs/operations.md)
  RECONCILE_EVERY_MINUTES: z.coerce.number().min(0).max(1440).default(10), // pause between reconciler runs (docs/reconciliation.md); 0: no reconciler
  MPESA_PULL_EVERY_MINUTES: z.coerce.number().min(0).max(1440).default(15), // pause between M-Pesa Pull Transactions runs (docs/mobile-money.md, Backfill); 0: none
  TREASURY_DESTINATION_DELAY_SECONDS: z.coerce.number().int().min(0).max(30 * 86_400).default(86_400), // a new sweep destination is usable after this (docs/treasury.md)
  METRICS_TOKEN: z.string().min(16, 'at least 16 characters').optional(), // GET /metrics answers `Authorization: Bearer <this>`; unset → 404 (docs/operations.md)
  WORKER_METRICS_PORT: z.coerce.number().int().min(0).max(65535).optional(), // a worker process serves GET /metrics on this port (on HOST); unset → none
  TEMPORAL_METRICS_PORT: z.coerce.number().int().min(1).max(65535).optional(), // the Temporal SDK's own Prometheus exporter (worker and client metrics) on HOST:this; unset → none
  // Traces over OTLP/HTTP (docs/tracing.md): off unless the endpoint is set; the standard OpenTelemetry names.
  OTEL_EXPORTER_OTLP_ENDPOINT: optionalUrl, // the collector's base URL; spans go to <this>/v1/traces
  OTEL_EXPORTER_OTLP_TRACES_ENDPOINT: optionalUrl, // the full traces URL, over the one above
  OTEL_SERVICE_NAME: z.string().min(1).max(100).optional(), // unset → malipo-api, malipo-worker, or malipo for `malipo start`
  // The standard samplers, and ours (the default): every write's trace kept whole, other traces (reads, background work) at the ratio.
  OTEL_TRACES_SAMPLER: z.enum(['parentbased_writes_always', 'always_on', 'always_off', 'traceidratio', 'parentbased_always_on', 'parentbased_always_off', 'parentbased_traceidratio']).default('parentbased_writes_always'),
  OTEL_TRACES_SAMPLER_ARG: z.coerce.number().min(0).max(1).optional(), // the ratio: of traces not begun by a write for parentbased_writes_always (default 0.1), of all traces for *traceidratio (default 1)
  LOG_LEVEL: z.enum(['fatal', 'error', 'warn', 'info', 'debug', 'trace', 'silent']).default('info'),
  // Proxies whose X-Forwarded-For is believed: addresses/CIDR ranges, comma-separated; unset → none (docs/operations.md).
  TRUST_PROXY: z
    .string()
    .optional()
    .transform((value, ctx): TrustProxy => {
      const parsed = parseTrustProxy(value);
      if ('value' in parsed) return parsed.value;
      for (const message of parsed.problems) ctx.addIssue({ code: z.ZodIssueCode.custom, message });
      return z.NEVER;
    }),
});

export interface Config {
  readonly host: string;
  readonly port: number;
  readonly publicBaseUrl: string;
  readonly checkoutBaseUrl: string;
  readonly keyPrefix: string;
  readonly apiKeyCacheSeconds: number;
  readonly dashboardSignup: boolean;
  readonly dataDir: string;
  readonly databaseUrl: string | undefined;
  /** Whether the pool names its statements (DATABASE_PREPARED_STATEMENTS); never on the embedded database. */
  readonly databasePreparedStatements: boolean;
  readonly temporal: {
    readonly address: string | undefined;
    readonly namespace: string;
    readonly port: number;
    readonly uiPort: number;
    /** TEMPORAL_UI_URL; runtime/ fills in the embedded dev server's UI when unset. */
    readonly uiUrl: string | undefined;
    readonly cliPath: string | undefined;
    /** TEMPORAL_CLI_DOWNLOAD_BASE; unset → the pinned version's GitHub release (runtime/temporal-cli.ts). */
    readonly cliDownloadBase: string | undefined;
    readonly taskQueuePrefix: string;
  };
  /** `npm run start:cluster`: pinned binaries (else cached or built), Temporal's database name, process counts. */
  readonly cluster: {
    readonly serverPath: string | undefined;
    readonly sqlToolPath: string | undefined;
    readonly uiServerPath: string | undefined;
    readonly temporalDatabase: string;
    readonly apiProcesses: number;
    readonly workerProcesses: number;
    /** CLUSTER_METRICS_PORT: the first of the worker processes' metrics ports (two per worker); undefined, none. */
    readonly metricsPort: number | undefined;
  };
  readonly pglitePort: number | undefined;
  readonly redisUrl: string | undefined;
  /** Parsed ENCRYPTION_KEY; unset means test credentials use a key generated into DATA_DIR and live ones are refused. */
  readonly encryptionKeys: Keyring | undefined;
  readonly mpesa: MpesaEndpoints;
  readonly testKesPerUsdt: string;
  readonly rateUrl: string | undefined;
  /** Native-coin USD prices for the cost of sweep plans (docs/rates.md, "Native coin prices"). */
  readonly nativePrices: { readonly sources: readonly string[]; readonly testPrices: Readonly<Record<string, string>> };
  /** Live USDT/KES sources and the checks a live rate must pass (docs/rates.md). */
  readonly rates: {
    readonly sources: readonly string[];
    readonly minKesPerUsdt: number;
    readonly maxKesPerUsdt: number;
    readonly maxSpreadPercent: number;
    readonly maxJumpPercent: number;
  };
  readonly idempotencyLeaseSeconds: number;
  readonly webhooks: {
    readonly retryScale: number;
    readonly dnsServers: readonly string[];
    /** Canonical CIDRs test-mode webhooks may reach besides public addresses (never link-local). */
    readonly testAllowedNetworks: readonly string[];
    /** The outbox relay (worker/webhook-relay.ts): whether this process's webhooks workers run it, and its idle pause. */
    readonly relay: { readonly enabled: boolean; readonly pollMs: number };
  };
  readonly mpesaQueryAfterSeconds: number;
  readonly evidencePullSeconds: number;
  readonly linkHistoryEventLimit: number;
  readonly chainWatchers: boolean;
  readonly chainPollMs: number | undefined;
  /** GET /ready's bounds on a chain watcher (READY_CHAIN_STALE_SECONDS, READY_CHAIN_LAG_BLOCKS); undefined: per chain. */
  readonly readyChain: { readonly staleSeconds: number | undefined; readonly lagBlocks: number | undefined };
  /** Minutes between reconciler runs; 0 turns the reconciler off (docs/reconciliation.md). */
  readonly reconcileEveryMinutes: number;
  /** Minutes between scheduled M-Pesa pulls; 0 turns them off (docs/mobile-money.md, "Backfill"). */
  readonly mpesaPullEveryMinutes: number;
  /** Seconds before a new sweep destination is usable (TREASURY_DESTINATION_DELAY_SECONDS, default 24 h; docs/treasury.md). */
  readonly treasuryDestinationDelaySeconds: number;
  /** METRICS_TOKEN: the bearer token of the API's GET /metrics; undefined turns the route off (404). */
  readonly metricsToken: string | undefined;
  /** WORKER_METRICS_PORT: a worker process's own metrics port; undefined, none. */
  readonly workerMetricsPort: number | undefined;
  /** TEMPORAL_METRICS_PORT: the Temporal SDK's own Prometheus exporter; undefined, none. */
  readonly temporalMetricsPort: number | undefined;
  readonly logLevel: z.infer<typeof envSchema>['LOG_LEVEL'];
  /** OTEL_*: where traces go and which are kept; undefined (no endpoint) turns tracing off (docs/tracing.md). */
  readonly tracing: TracingSettings | undefined;
  /** Parsed TRUST_PROXY: false (the default) or the trusted proxies' addresses and ranges. */
  readonly trustProxy: TrustProxy;
  /** Each USDT rail's endpoints per environment and depth: `RPC_URL_<RAIL>_<ENV>`, `USDT_CONTRACT_<RAIL>_<ENV>`, `SWEEP_DELEGATE_<RAIL>_<ENV>`, `CONFIRMATIONS_<RAIL>` over the defaults. */
  readonly rails: RailSettings;
}

export interface TracingSettings {
  /** Where spans are POSTed (OTLP/HTTP, JSON): OTEL_EXPORTER_OTLP_TRACES_ENDPOINT, else OTEL_EXPORTER_OTLP_ENDPOINT + /v1/traces. */
  readonly tracesUrl: string;
  /** OTEL_SERVICE_NAME; undefined lets the process name itself (malipo-api, malipo-worker, malipo). */
  readonly serviceName: string | undefined;
  readonly sampler: z.infer<typeof envSchema>['OTEL_TRACES_SAMPLER'];
  /** The ratio, 0 to 1: of the traces not begun by a write that parentbased_writes_always keeps, of all traces for a traceidratio sampler. */
  readonly samplerRatio: number;
}

export class ConfigError extends Error {
  constructor(readonly problems: string[]) {
    super(`Invalid configuration:\n${problems.map((p) => `  - ${p}`).join('\n')}`);
  }
}

const railOverridePattern = /^(RPC_URL|USDT_CONTRACT|CHAIN_ID|CONFIRMATIONS|SWEEP_DELEGATE)_/;

export function loadConfig(env: NodeJS.ProcessEnv = process.env): Config {
  // From here the rail set is read (the settings of every rail): no rail may join it after (rails/register.ts).
  sealRails();
  const parsed = envSchema.safeParse(env);
  if (!parsed.success) {
    throw new ConfigError(parsed.error.issues.map((i) => `${i.path.join('.')}: ${i.message}`));
  }
  const e = parsed.data;
  const publicBaseUrl = stripSlash(e.PUBLIC_BASE_URL ?? `http://localhost:${e.PORT}`);
  const railOverrides: Record<string, string> = {};
  for (const [name, value] of Object.entries(env)) {
    if (railOverridePattern.test(name) && value) railOverrides[name] = value;
  }
  if (railEndpointProblems(railOverrides).length) throw new ConfigError(railEndpointProblems(railOverrides));
  // The one-command embedded setup is a developer's machine: its test webhooks may reach loopback unless told otherwise.
  const embedded = !e.DATABASE_URL && !e.TEMPORAL_ADDRESS;
  const testNetworks = parseAllowedNetworks(e.WEBHOOK_TEST_ALLOWED_NETWORKS ?? (embedded ? 'loopback' : 'none'));
  if ('problems' in testNetworks) throw new ConfigError(testNetworks.problems.map((p) => `WEBHOOK_TEST_ALLOWED_NETWORKS: ${p}`));
  if (rateSourceProblems(e).length) throw new ConfigError(rateSourceProblems(e));
  if (nativePriceProblems(e).length) throw new ConfigError(nativePriceProblems(e));
  return Object.freeze({
    host: e.HOST,
    port: e.PORT,
    publicBaseUrl,
    checkoutBaseUrl: stripSlash(e.CHECKOUT_BASE_URL ?? publicBaseUrl),
    keyPrefix: e.KEY_PREFIX,
    apiKeyCacheSeconds: e.API_KEY_CACHE_SECONDS,
    dashboardSignup: e.DASHBOARD_SIGNUP === 'open',
    dataDir: resolve(e.DATA_DIR),
    databaseUrl: e.DATABASE_URL || undefined,
    databasePreparedStatements: e.DATABASE_PREPARED_STATEMENTS === 'true',
    temporal: Object.freeze({
      address: e.TEMPORAL_ADDRESS || undefined,
      namespace: e.TEMPORAL_NAMESPACE,
      port: e.TEMPORAL_PORT,
      uiPort: e.TEMPORAL_UI_PORT,
      uiUrl: e.TEMPORAL_UI_URL ? stripSlash(e.TEMPORAL_UI_URL) : undefined,
      cliPath: e.TEMPORAL_CLI_PATH || undefined,
      cliDownloadBase: e.TEMPORAL_CLI_DOWNLOAD_BASE,
      taskQueuePrefix: e.TASK_QUEUE_PREFIX,
    }),
    cluster: Object.freeze({
      serverPath: e.TEMPORAL_SERVER_PATH || undefined,
      sqlToolPath: e.TEMPORAL_SQL_TOOL_PATH || undefined,
      uiServerPath: e.TEMPORAL_UI_SERVER_PATH || undefined,
      temporalDatabase: e.TEMPORAL_DATABASE,
      apiProcesses: e.CLUSTER_API_PROCESSES,
      workerProcesses: e.CLUSTER_WORKER_PROCESSES,
      metricsPort: e.CLUSTER_METRICS_PORT,
    }),
    pglitePort: e.PGLITE_PORT,
    redisUrl: e.REDIS_URL || undefined,
    encryptionKeys: e.ENCRYPTION_KEY,
    mpesa: Object.freeze({ sandboxUrl: e.MPESA_SANDBOX_URL, liveUrl: e.MPESA_LIVE_URL }),
    testKesPerUsdt: e.TEST_KES_PER_USDT,
    rateUrl: e.RATE_URL || undefined,
    nativePrices: Object.freeze({
      sources: Object.freeze(listOf(e.NATIVE_PRICE_SOURCES)),
      testPrices: Object.freeze(Object.fromEntries(listOf(e.TEST_NATIVE_USD_PRICES).map((p) => p.split('=', 2).map((x) => x.trim()) as [string, string]))),
    }),
    rates: Object.freeze({
      sources: Object.freeze(e.RATE_SOURCES.split(',').map((x) => x.trim()).filter(Boolean)),
      minKesPerUsdt: e.RATE_MIN_KES_PER_USDT,
      maxKesPerUsdt: e.RATE_MAX_KES_PER_USDT,
      maxSpreadPercent: e.RATE_MAX_SPREAD_PERCENT,
      maxJumpPercent: e.RATE_MAX_JUMP_PERCENT,
    }),
    idempotencyLeaseSeconds: e.IDEMPOTENCY_LEASE_SECONDS,
    webhooks: Object.freeze({
      retryScale: e.WEBHOOK_RETRY_SCALE,
      dnsServers: (e.WEBHOOK_DNS_SERVERS ?? '').split(',').map((s) => s.trim()).filter(Boolean),
      testAllowedNetworks: Object.freeze(testNetworks.networks),
      relay: Object.freeze({ enabled: e.WEBHOOK_RELAY === 'on', pollMs: e.WEBHOOK_RELAY_POLL_MS }),
    }),
    mpesaQueryAfterSeconds: e.MPESA_QUERY_AFTER_SECONDS,
    evidencePullSeconds: e.EVIDENCE_PULL_SECONDS,
    linkHistoryEventLimit: e.LINK_HISTORY_EVENT_LIMIT,
    chainWatchers: e.CHAIN_WATCHERS === 'on',
    chainPollMs: e.CHAIN_POLL_MS,
    readyChain: Object.freeze({ staleSeconds: e.READY_CHAIN_STALE_SECONDS, lagBlocks: e.READY_CHAIN_LAG_BLOCKS }),
    reconcileEveryMinutes: e.RECONCILE_EVERY_MINUTES,
    mpesaPullEveryMinutes: e.MPESA_PULL_EVERY_MINUTES,
    treasuryDestinationDelaySeconds: e.TREASURY_DESTINATION_DELAY_SECONDS,
    metricsToken: e.METRICS_TOKEN || undefined,
    workerMetricsPort: e.WORKER_METRICS_PORT,
    temporalMetricsPort: e.TEMPORAL_METRICS_PORT,
    logLevel: e.LOG_LEVEL,
    tracing: tracingSettings(e),
    trustProxy: e.TRUST_PROXY,
    rails: railSettingsFrom(railOverrides),
  });
}

/** Tracing is on when an OTLP endpoint is named (either variable), as OpenTelemetry's own SDKs read them. */
function tracingSettings(e: z.infer<typeof envSchema>): TracingSettings | undefined {
  const base = e.OTEL_EXPORTER_OTLP_ENDPOINT;
  const tracesUrl = e.OTEL_EXPORTER_OTLP_TRACES_ENDPOINT ?? (base ? `${stripSlash(base)}/v1/traces` : undefined);
  if (!tracesUrl) return undefined;
  const samplerRatio = e.OTEL_TRACES_SAMPLER_ARG ?? (e.OTEL_TRACES_SAMPLER === 'parentbased_writes_always' ? 0.1 : 1);
  return Object.freeze({ tracesUrl, serviceName: e.OTEL_SERVICE_NAME, sampler: e.OTEL_TRACES_SAMPLER, samplerRatio });
}

const listOf = (raw: string) => raw.split(',').map((x) => x.trim()).filter(Boolean);

/** NATIVE_PRICE_SOURCES entries that are no source, and TEST_NATIVE_USD_PRICES entries that are no `COIN=price`. */
function nativePriceProblems(e: z.infer<typeof envSchema>): string[] {
  const problems = listOf(e.NATIVE_PRICE_SOURCES)
    .filter((x) => !/^(coingecko|coinbase)(@https?:\/\/[^\s@]+)?$/.test(x))
    .map((x) => `NATIVE_PRICE_SOURCES: '${x}' is neither coingecko nor coinbase, optionally with @ and an http(s) base URL`);
  for (const p of listOf(e.TEST_NATIVE_USD_PRICES)) {
    if (!/^[A-Z0-9]{2,10}=\d{1,12}(\.\d{1,8})?$/.test(p.replace(/\s+/g, ''))) problems.push(`TEST_NATIVE_USD_PRICES: '${p}' is not COIN=price (e.g. BNB=600.5)`);
  }
  return problems;
}

/** The live rate settings that only make sense together. */
function rateSourceProblems(e: z.infer<typeof envSchema>): string[] {
  const problems: string[] = [];
  if (e.RATE_MIN_KES_PER_USDT >= e.RATE_MAX_KES_PER_USDT) problems.push('RATE_MIN_KES_PER_USDT: must be below RATE_MAX_KES_PER_USDT');
  for (const source of e.RATE_SOURCES.split(',').map((x) => x.trim()).filter(Boolean)) {
    if (!/^(coingecko|coinbase|https?:\/\/\S+)$/.test(source)) problems.push(`RATE_SOURCES: '${source}' is neither coingecko, coinbase nor an http(s) URL`);
  }
  return problems;
}

function stripSlash(url: string): string {
  return url.replace(/\/+$/, '');
}
