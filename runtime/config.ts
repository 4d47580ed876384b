import { resolve } from 'node:path';
import { z } from 'zod';
import { parseKeyring, type Keyring } from '../domain/crypto/credentials.js';
import { railEndpointProblems } from './rail-endpoints.js';

/**
 * Every setting the service reads, parsed once at boot. No other module reads `process.env`:
 * they receive the frozen `Config` object. All problems are reported together.
 */
const optionalUrl = z.string().url().optional();

const envSchema = z.object({
  HOST: z.string().default('127.0.0.1'),
  PORT: z.coerce.number().int().min(0).max(65535).default(3000),
  PUBLIC_BASE_URL: optionalUrl,
  CHECKOUT_BASE_URL: optionalUrl,
  KEY_PREFIX: z.string().regex(/^[a-z]{1,8}$/, 'lowercase letters, 1 to 8').default('sk'),
  DATA_DIR: z.string().default('./data'),
  DATABASE_URL: z.string().optional(),
  TEMPORAL_ADDRESS: z.string().optional(),
  TEMPORAL_NAMESPACE: z.string().default('default'),
  TEMPORAL_PORT: z.coerce.number().int().default(7233),
  TEMPORAL_UI_PORT: z.coerce.number().int().default(8233),
  TEMPORAL_CLI_PATH: z.string().optional(),
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
  WEBHOOK_RETRY_SCALE: z.coerce.number().positive().max(1).default(1), // shrinks every webhook timer; tests and demos only (docs/webhooks.md)
  WEBHOOK_DNS_SERVERS: z.string().optional(), // comma-separated `ip[:port]` that resolve live webhook hosts; unset → the system's resolv.conf
  MPESA_QUERY_AFTER_SECONDS: z.coerce.number().int().min(1).max(600).default(30), // first STK query for a prompt whose callback has not come
  LINK_HISTORY_EVENT_LIMIT: z.coerce.number().int().min(20).max(40_000).default(10_000), // a link's workflow continues as new past this many events
  CHAIN_WATCHERS: z.enum(['on', 'off']).default('on'), // off: never start chain watchers (M-Pesa-only or offline deployments)
  CHAIN_POLL_MS: z.coerce.number().int().min(10).max(600_000).optional(), // caught-up watchers' poll interval; default per chain
  LOG_LEVEL: z.enum(['fatal', 'error', 'warn', 'info', 'debug', 'trace', 'silent']).default('info'),
});

export interface Config {
  readonly host: string;
  readonly port: number;
  readonly publicBaseUrl: string;
  readonly checkoutBaseUrl: string;
  readonly keyPrefix: string;
  readonly dataDir: string;
  readonly databaseUrl: string | undefined;
  readonly temporal: {
    readonly address: string | undefined;
    readonly namespace: string;
    readonly port: number;
    readonly uiPort: number;
    readonly cliPath: string | undefined;
    readonly taskQueuePrefix: string;
  };
  readonly pglitePort: number | undefined;
  readonly redisUrl: string | undefined;
  /** Parsed ENCRYPTION_KEY; unset means test credentials use a key generated into DATA_DIR and live ones are refused. */
  readonly encryptionKeys: Keyring | undefined;
  readonly mpesa: { readonly sandboxUrl: string; readonly liveUrl: string };
  readonly testKesPerUsdt: string;
  readonly rateUrl: string | undefined;
  readonly webhooks: { readonly retryScale: number; readonly dnsServers: readonly string[] };
  readonly mpesaQueryAfterSeconds: number;
  readonly linkHistoryEventLimit: number;
  readonly chainWatchers: boolean;
  readonly chainPollMs: number | undefined;
  readonly logLevel: z.infer<typeof envSchema>['LOG_LEVEL'];
  /** Per-rail overrides read from `RPC_URL_<RAIL>_<ENV>`, `USDT_CONTRACT_<RAIL>_<ENV>`, `CONFIRMATIONS_<RAIL>`. */
  readonly railOverrides: Readonly<Record<string, string>>;
}

export class ConfigError extends Error {
  constructor(readonly problems: string[]) {
    super(`Invalid configuration:\n${problems.map((p) => `  - ${p}`).join('\n')}`);
  }
}

const railOverridePattern = /^(RPC_URL|USDT_CONTRACT|CONFIRMATIONS)_/;

export function loadConfig(env: NodeJS.ProcessEnv = process.env): Config {
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
  return Object.freeze({
    host: e.HOST,
    port: e.PORT,
    publicBaseUrl,
    checkoutBaseUrl: stripSlash(e.CHECKOUT_BASE_URL ?? publicBaseUrl),
    keyPrefix: e.KEY_PREFIX,
    dataDir: resolve(e.DATA_DIR),
    databaseUrl: e.DATABASE_URL || undefined,
    temporal: Object.freeze({
      address: e.TEMPORAL_ADDRESS || undefined,
      namespace: e.TEMPORAL_NAMESPACE,
      port: e.TEMPORAL_PORT,
      uiPort: e.TEMPORAL_UI_PORT,
      cliPath: e.TEMPORAL_CLI_PATH || undefined,
      taskQueuePrefix: e.TASK_QUEUE_PREFIX,
    }),
    pglitePort: e.PGLITE_PORT,
    redisUrl: e.REDIS_URL || undefined,
    encryptionKeys: e.ENCRYPTION_KEY,
    mpesa: Object.freeze({ sandboxUrl: e.MPESA_SANDBOX_URL, liveUrl: e.MPESA_LIVE_URL }),
    testKesPerUsdt: e.TEST_KES_PER_USDT,
    rateUrl: e.RATE_URL || undefined,
    webhooks: Object.freeze({ retryScale: e.WEBHOOK_RETRY_SCALE, dnsServers: (e.WEBHOOK_DNS_SERVERS ?? '').split(',').map((s) => s.trim()).filter(Boolean) }),
    mpesaQueryAfterSeconds: e.MPESA_QUERY_AFTER_SECONDS,
    linkHistoryEventLimit: e.LINK_HISTORY_EVENT_LIMIT,
    chainWatchers: e.CHAIN_WATCHERS === 'on',
    chainPollMs: e.CHAIN_POLL_MS,
    logLevel: e.LOG_LEVEL,
    railOverrides: Object.freeze(railOverrides),
  });
}

function stripSlash(url: string): string {
  return url.replace(/\/+$/, '');
}
