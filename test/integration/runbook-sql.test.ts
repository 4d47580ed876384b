import { afterAll, beforeAll, describe, expect, it } from '@jest/globals';
import { readFileSync, readdirSync } from 'node:fs';
import pg from 'pg';
import { createTestDatabase } from '../helpers/database.js';

/**
 * The runbooks tell an operator to paste their SQL into psql during an incident: every ```sql
 * block must run against the real schema. Each runs on a freshly migrated database in a read-only
 * transaction, so a runbook query that writes fails here too.
 */
const dir = 'docs/runbooks';
const blocks = readdirSync(dir)
  .filter((f) => f.endsWith('.md'))
  .flatMap((file) => [...readFileSync(`${dir}/${file}`, 'utf8').matchAll(/```sql\n([\s\S]*?)```/g)].map((m, i) => [`${file} #${i + 1}`, m[1]!] as const));

let db: { url: string; drop: () => Promise<void> };
let client: pg.Client;

beforeAll(async () => {
  db = await createTestDatabase();
  client = new pg.Client({ connectionString: db.url });
  await client.connect();
});
afterAll(async () => {
  await client?.end();
  await db?.drop();
});

describe('the SQL in docs/runbooks', () => {
  it('is there: at least one query per alert runbook', () => {
    const runbooks = readdirSync(dir).filter((f) => f.endsWith('.md') && f !== 'README.md');
    for (const file of runbooks) expect(blocks.some(([name]) => name.startsWith(`${file} `))).toBe(true);
  });

  it.each(blocks)('%s runs on the migrated schema in a read-only transaction', async (_name, sql) => {
    await client.query('BEGIN READ ONLY');
    try {
      await client.query(sql);
    } finally {
      await client.query('ROLLBACK');
    }
  });

  it('refuses a write in the same harness, so a passing block really ran read-only', async () => {
    await client.query('BEGIN READ ONLY');
    try {
      await expect(client.query("UPDATE payment_links SET status = 'CONFIRMED'")).rejects.toThrow(/read-only transaction/);
    } finally {
      await client.query('ROLLBACK');
    }
  });
});
