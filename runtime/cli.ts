import { migrate } from '../db/migrate.js';
import { AppError } from '../domain/errors.js';
import { openPool } from '../db/pool.js';
import { createStore } from '../db/store-repo.js';
import { addStoreOwner, normalEmail } from '../services/dashboard/accounts.js';
import { reencryptAllCredentials } from '../services/mpesa/reencrypt.js';
import { reencryptWebhookSecrets } from '../services/webhooks/reencrypt-secrets.js';
import { reencryptSealedResponses } from '../api/plugins/idempotency-reencrypt.js';
import { loadConfig, type Config } from '../config/config.js';
import { errorBody, keysUsage, parseKeyCommand, runKeyCommand, UsageError, type KeyCommand } from './keys-cli.js';

const usage = `Usage: malipo <command>

  start                       start everything (embedded PGlite and Temporal unless configured)
  api                         run only the API (needs DATABASE_URL and TEMPORAL_ADDRESS)
  worker                      run only the Temporal worker (same)
  migrate                     apply database migrations
  stores:create --name NAME [--owner-email EMAIL]
                              create a store and print its keys once (JSON); with --owner-email, make
                              that person its dashboard owner (a new account's password is printed once)
${keysUsage}  replay FILE|DIR…            replay exported workflow histories against the current code
  credentials:reencrypt       re-encrypt stored secrets (M-Pesa credentials, webhook secrets) under the current ENCRYPTION_KEY

The offline demo and the Daraja emulator are npm scripts outside this CLI:
  npm run demo, npm run demo:pay -- LINK_ID, npm run emulator:daraja -- --port N
`;

export async function main(argv: string[]): Promise<void> {
  const [command, ...rest] = argv;
  let config: Config;
  try {
    config = loadConfig();
  } catch (err) {
    console.error((err as Error).message);
    process.exit(2);
  }
  switch (command) {
    case 'start':
      return serve(config, { api: true, worker: true });
    case 'api':
      return serve(config, { api: true, worker: false });
    case 'worker':
      return serve(config, { api: false, worker: true });
    case 'migrate':
      return withDatabase(config, async (url) => {
        const applied = await migrate(url);
        console.log(JSON.stringify({ applied }));
      });
    case 'stores:create': {
      const name = flag(rest, '--name');
      if (!name) return fail('stores:create needs --name "Store name"');
      const ownerEmail = flag(rest, '--owner-email');
      if (rest.includes('--owner-email') && !ownerEmail) return fail('stores:create --owner-email needs an email address');
      if (ownerEmail !== undefined) {
        try {
          normalEmail(ownerEmail, 'owner-email');
        } catch (err) {
          return fail(`stores:create --owner-email: ${(err as Error).message}`);
        }
      }
      return withDatabase(config, async (url) => {
        await migrate(url);
        const pool = await openPool(url, 1);
        try {
          const store = await createStore(pool, name, config.keyPrefix);
          const ownerEmail = flag(rest, '--owner-email');
          const owner = ownerEmail === undefined ? undefined : await addStoreOwner({ pool }, store.clientId, ownerEmail);
          console.log(JSON.stringify(owner ? { ...store, owner } : store));
        } finally {
          await pool.end();
        }
      });
    }
    case 'keys:list':
    case 'keys:create':
    case 'keys:roll':
    case 'keys:revoke':
      return keysCommand(config, command, rest);
    case 'credentials:reencrypt':
      return withDatabase(config, async (url) => {
        await migrate(url);
        const pool = await openPool(url, 1);
        try {
          const report = await reencryptEverything(pool, config);
          console.log(JSON.stringify(report));
          if (report.failed.length || report.webhookSecrets.failed.length || report.idempotencyRecords.failed.length) process.exitCode = 1;
        } finally {
          await pool.end();
        }
      });
    case 'replay': {
      const { replayHistories } = await import('./replay.js');
      if (rest.length === 0) return fail('replay needs history files or folders, e.g. npx malipo replay test/histories');
      process.exit((await replayHistories(rest)) === 0 ? 0 : 1);
    }
    default:
      process.stdout.write(usage);
      if (command && command !== 'help' && command !== '--help') process.exit(2);
  }
}

/**
 * Every ciphertext under the current key: M-Pesa connections (the top-level fields, as before),
 * webhook signing secrets (legacy plaintext encrypted too) and secret-bearing idempotent responses.
 */
async function reencryptEverything(pool: Parameters<typeof reencryptAllCredentials>[0], config: Config) {
  const mpesa = await reencryptAllCredentials(pool, config);
  const webhookSecrets = await reencryptWebhookSecrets(pool, config);
  const idempotencyRecords = await reencryptSealedResponses(pool, config);
  const currentKeyId = mpesa.currentKeyId || config.encryptionKeys?.current.id || '';
  return { ...mpesa, currentKeyId, webhookSecrets, idempotencyRecords };
}

async function keysCommand(config: Config, command: KeyCommand, args: string[]): Promise<void> {
  let parsed: ReturnType<typeof parseKeyCommand>;
  try {
    parsed = parseKeyCommand(command, { flag: (name) => flag(args, name) });
  } catch (err) {
    if (err instanceof UsageError) return fail(`${err.message}\n\n${keysUsage}`);
    throw err;
  }
  return withDatabase(config, async (url) => {
    await migrate(url);
    const pool = await openPool(url, 1);
    try {
      console.log(JSON.stringify(await runKeyCommand(pool, config.keyPrefix, parsed)));
    } catch (err) {
      if (!(err instanceof AppError)) throw err;
      console.error(errorBody(err));
      process.exitCode = 1;
    } finally {
      await pool.end();
    }
  });
}

function flag(args: string[], name: string): string | undefined {
  const i = args.indexOf(name);
  if (i >= 0) return args[i + 1];
  return args.find((a) => a.startsWith(`${name}=`))?.slice(name.length + 1);
}

function fail(message: string): never {
  console.error(message);
  process.exit(2);
}

/**
 * Runs a one-off command against the configured database: `DATABASE_URL`, else the running
 * service's embedded PGlite socket, else the embedded data directory opened directly.
 */
async function withDatabase(config: Config, fn: (url: string) => Promise<void>): Promise<void> {
  if (config.databaseUrl) return fn(config.databaseUrl);
  // Loaded only here and in serve(): a one-off command on DATABASE_URL starts in a fraction of the time.
  const { findRunningEmbeddedPostgres, startEmbeddedPostgres } = await import('./embedded-postgres.js');
  const running = await findRunningEmbeddedPostgres(config.dataDir);
  if (running) return fn(running);
  const embedded = await startEmbeddedPostgres({ dataDir: config.dataDir });
  try {
    await fn(embedded.url);
  } finally {
    await embedded.stop();
  }
}

async function serve(config: Config, opts: { api: boolean; worker: boolean }): Promise<void> {
  const { createLogger, startServices } = await import('./services.js');
  const logger = createLogger(config);
  const running = await startServices(config, logger, opts);
  const lines = ['Malipo is running.'];
  if (running.apiUrl) lines.push(`  API:          ${running.apiUrl}`, `  API docs:     ${running.apiUrl}/v1/openapi.json`);
  if (running.temporalUiUrl) lines.push(`  Temporal UI:  ${running.temporalUiUrl}`);
  lines.push(`  Temporal:     ${running.temporalAddress}`, `  Data:         ${config.databaseUrl ? 'DATABASE_URL' : config.dataDir}`);
  lines.push('Create a store: npx malipo stores:create --name "My shop"    Stop: Ctrl-C');
  console.log(lines.join('\n'));
  let stopping = false;
  const shutdown = async (signal: string) => {
    if (stopping) return;
    stopping = true;
    logger.info({ signal }, 'shutting down');
    await running.stop();
    process.exit(0);
  };
  process.on('SIGINT', () => void shutdown('SIGINT'));
  process.on('SIGTERM', () => void shutdown('SIGTERM'));
}
