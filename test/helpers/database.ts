import { userInfo } from 'node:os';
import pg from 'pg';
import { randomToken } from '../../domain/ids.js';
import { migrate } from '../../db/migrate.js';

/** The real PostgreSQL the suite runs against (CI: 127.0.0.1:5432, trust auth, database `test`). */
export function testDatabaseUrl(): string {
  return process.env.TEST_DATABASE_URL ?? `postgres://${process.env.PGUSER ?? userInfo().username}@127.0.0.1:5432/test`;
}

/** A fresh, migrated database for one test file; dropped by the returned function. */
export async function createTestDatabase(): Promise<{ url: string; drop: () => Promise<void> }> {
  const name = `malipo_t_${randomToken(10)}`;
  const admin = new pg.Client({ connectionString: testDatabaseUrl() });
  await admin.connect();
  await admin.query(`CREATE DATABASE ${name}`);
  await admin.end();
  const url = new URL(testDatabaseUrl());
  url.pathname = `/${name}`;
  await migrate(url.toString());
  return {
    url: url.toString(),
    async drop() {
      const c = new pg.Client({ connectionString: testDatabaseUrl() });
      await c.connect();
      await c.query(`DROP DATABASE IF EXISTS ${name} WITH (FORCE)`);
      await c.end();
    },
  };
}
