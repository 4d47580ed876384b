import { resolve } from 'node:path';
import { z } from 'zod';

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
  ENCRYPTION_KEY: z.string().optional(),
  MPESA_SANDBOX_URL: z.string().url().default('https://sandbox.safaricom.co.ke'),
  MPESA_LIVE_URL: z.string().url().default('https://api.safaricom.co.ke'),
  TEST_KES_PER_USDT: z
    .string()
    .regex(/^\d+(\.\d{1,6})?$/, 'a positive decimal such as 130 or 129.5')
    .default('130'),
  RATE_URL: z.string().optional(),
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
  readonly encryptionKey: string | undefined;
  readonly mpesa: { readonly sandboxUrl: string; readonly liveUrl: string };
  readonly testKesPerUsdt: string;
  readonly rateUrl: string | undefined;
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
    encryptionKey: e.ENCRYPTION_KEY || undefined,
    mpesa: Object.freeze({ sandboxUrl: e.MPESA_SANDBOX_URL, liveUrl: e.MPESA_LIVE_URL }),
    testKesPerUsdt: e.TEST_KES_PER_USDT,
    rateUrl: e.RATE_URL || undefined,
    logLevel: e.LOG_LEVEL,
    railOverrides: Object.freeze(railOverrides),
  });
}

function stripSlash(url: string): string {
  return url.replace(/\/+$/, '');
}
