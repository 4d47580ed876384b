import { readdir, readFile } from 'node:fs/promises';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import pg from 'pg';

const migrationsDir = join(dirname(fileURLToPath(import.meta.url)), 'migrations');

/** An arbitrary constant: the advisory lock that serialises concurrent migrators (api + worker). */
const migrationLockId = 7_305_411;

/**
 * Applies `db/migrations/NNNN_name.sql` in order, each in its own transaction, once. Safe to run
 * from several processes at the same time: an advisory lock makes the others wait. Uses a plain
 * `pg` client because migration files hold several statements (the simple query protocol).
 */
export async function migrate(connectionString: string): Promise<string[]> {
  const files = await readMigrationNames();
  const client = new pg.Client({ connectionString });
  await client.connect();
  try {
    await client.query('SELECT pg_advisory_lock($1)', [migrationLockId]);
    await client.query(`CREATE TABLE IF NOT EXISTS schema_migrations (
      name text PRIMARY KEY, applied_at timestamptz NOT NULL DEFAULT now())`);
    const done = new Set((await client.query<{ name: string }>('SELECT name FROM schema_migrations')).rows.map((r) => r.name));
    const applied: string[] = [];
    for (const file of files) {
      if (done.has(file)) continue;
      const text = await readFile(join(migrationsDir, file), 'utf8');
      await client.query('BEGIN');
      try {
        await client.query(text);
        await client.query('INSERT INTO schema_migrations (name) VALUES ($1)', [file]);
        await client.query('COMMIT');
      } catch (err) {
        await client.query('ROLLBACK');
        throw new Error(`migration ${file} failed: ${(err as Error).message}`);
      }
      applied.push(file);
    }
    await client.query('SELECT pg_advisory_unlock($1)', [migrationLockId]);
    return applied;
  } finally {
    await client.end();
  }
}

async function readMigrationNames(): Promise<string[]> {
  return (await readdir(migrationsDir)).filter((f) => /^\d{4}_.+\.sql$/.test(f)).sort();
}

let shipped: Promise<readonly string[]> | undefined;

/**
 * The migrations this code ships (`NNNN_name.sql`, in order), read from disk once per process:
 * readiness compares them with `schema_migrations` on every probe without touching the disk.
 */
export function shippedMigrations(): Promise<readonly string[]> {
  shipped ??= readMigrationNames().catch((err) => {
    shipped = undefined;
    throw err;
  });
  return shipped;
}
