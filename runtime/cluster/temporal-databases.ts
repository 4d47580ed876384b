import { execFile } from 'node:child_process';
import { promisify } from 'node:util';
import pg from 'pg';
import { databaseUrlOn, type PostgresTarget } from './postgres-target.js';
import { clusterSettings } from './settings.js';

const run = promisify(execFile);

/**
 * Creates and migrates Temporal's two databases with the server's own `sql` tool and the schemas
 * embedded in it, as Temporal's auto-setup image does: `create-database` (a no-op when it
 * exists), `setup-schema -v 0.0` (skipped once versioned), `update-schema` to the newest version.
 * Every step is idempotent, so a second start only checks.
 */
export async function setupTemporalDatabases(opts: {
  sqlTool: string;
  target: PostgresTarget;
  names: { store: string; visibility: string };
  log?: (msg: string) => void;
}): Promise<void> {
  const { target } = opts;
  const env = { ...process.env, SQL_PASSWORD: target.password };
  const common = [
    '--plugin', clusterSettings.sqlPlugin,
    '--endpoint', target.host,
    '--port', String(target.port),
    '--user', target.user,
    ...(tlsFlags(target.sslmode)),
  ];
  const steps = [
    { db: opts.names.store, schema: clusterSettings.schemaNames.store },
    { db: opts.names.visibility, schema: clusterSettings.schemaNames.visibility },
  ];
  for (const { db, schema } of steps) {
    for (const args of [['create-database'], ['setup-schema', '-v', '0.0'], ['update-schema', '--schema-name', schema]]) {
      try {
        await run(opts.sqlTool, [...common, '--db', db, ...args], { env, maxBuffer: 16 * 1024 * 1024 });
      } catch (err) {
        const e = err as { stderr?: string; stdout?: string; message: string };
        throw new Error(`temporal sql tool: ${args[0]} of database ${db} failed:\n${(e.stderr || e.stdout || e.message).slice(-3000)}`);
      }
    }
    opts.log?.(`Temporal database ${db} is at the newest ${schema} schema`);
  }
}

function tlsFlags(sslmode: string | undefined): string[] {
  if (!sslmode || sslmode === 'disable' || sslmode === 'prefer' || sslmode === 'allow') return [];
  return sslmode === 'verify-full' ? ['--tls'] : ['--tls', '--tls-disable-host-verification'];
}

/** Drops both Temporal databases (the cluster test run makes a fresh pair each time). */
export async function dropTemporalDatabases(adminUrl: string, names: { store: string; visibility: string }): Promise<void> {
  const client = new pg.Client({ connectionString: databaseUrlOn(adminUrl, 'postgres') });
  await client.connect();
  try {
    for (const db of [names.store, names.visibility]) await client.query(`DROP DATABASE IF EXISTS "${db}" WITH (FORCE)`);
  } finally {
    await client.end();
  }
}

/** Creates the application database on first start when it does not exist yet. */
export async function ensureDatabase(databaseUrl: string, database: string): Promise<boolean> {
  const client = new pg.Client({ connectionString: databaseUrlOn(databaseUrl, 'postgres') });
  await client.connect();
  try {
    const found = await client.query('SELECT 1 FROM pg_database WHERE datname = $1', [database]);
    if (found.rowCount) return false;
    await client.query(`CREATE DATABASE "${database.replace(/"/g, '""')}"`);
    return true;
  } finally {
    await client.end();
  }
}
