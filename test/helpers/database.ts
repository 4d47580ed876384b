import { userInfo } from 'node:os';
import pg from 'pg';
import { randomToken } from '../../domain/ids.js';
import { migrate } from '../../db/migrate.js';

/** The real PostgreSQL the suite runs against (CI: 127.0.0.1:5432, trust auth, database `test`). */
export function testDatabaseUrl(): string {
  return process.env.TEST_DATABASE_URL ?? `postgres://${process.env.PGUSER ?? userInfo().username}@127.0.0.1:5432/test`;
}

function databaseUrl(name: string): string {
  const url = new URL(testDatabaseUrl());
  url.pathname = `/${name}`;
  return url.toString();
}

async function asAdmin<T>(run: (admin: pg.Client) => Promise<T>): Promise<T> {
  const admin = new pg.Client({ connectionString: testDatabaseUrl() });
  await admin.connect();
  try {
    return await run(admin);
  } finally {
    await admin.end();
  }
}

/**
 * The run's migrated template, made once by the jest global setup from the migrations as they are
 * when the run starts. Copying it (CREATE DATABASE … TEMPLATE) takes a fraction of the time of
 * applying every migration again in each of some hundred files, and gives the same schema and the
 * same schema_migrations rows. Nothing connects to the template after it is made: PostgreSQL
 * refuses to copy a database others are connected to.
 */
const templateEnvName = 'MALIPO_TEST_TEMPLATE_DATABASE';

export async function createTemplateDatabase(): Promise<void> {
  const name = `malipo_template_${randomToken(10)}`;
  await asAdmin((admin) => admin.query(`CREATE DATABASE ${name}`));
  await migrate(databaseUrl(name));
  process.env[templateEnvName] = name;
}

export async function dropTemplateDatabase(): Promise<void> {
  const name = process.env[templateEnvName];
  if (name) await asAdmin((admin) => admin.query(`DROP DATABASE IF EXISTS ${name} WITH (FORCE)`));
}

/**
 * A fresh, migrated database for one test file; dropped by the returned function. Inside a jest
 * run it is a copy of the run's template; elsewhere (benches) it is migrated here.
 */
export async function createTestDatabase(): Promise<{ url: string; drop: () => Promise<void> }> {
  const name = `malipo_t_${randomToken(10)}`;
  const template = process.env[templateEnvName];
  await asAdmin((admin) => admin.query(`CREATE DATABASE ${name}${template ? ` TEMPLATE ${template}` : ''}`));
  const url = databaseUrl(name);
  if (!template) await migrate(url);
  return {
    url,
    async drop() {
      await asAdmin((admin) => admin.query(`DROP DATABASE IF EXISTS ${name} WITH (FORCE)`));
    },
  };
}
