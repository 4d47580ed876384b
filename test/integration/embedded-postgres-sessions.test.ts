import { afterAll, beforeAll, describe, expect, it } from '@jest/globals';
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import pg from 'pg';
import { startEmbeddedPostgres, type EmbeddedPostgres } from '../../runtime/embedded-postgres.js';

/**
 * The embedded PGlite is one session shared by every pool connection. pglite-socket 0.2.x let
 * two connections' Parse/Bind/Execute/Sync interleave outside transactions, so a query could fail
 * ("unnamed prepared statement does not exist") or, worse, answer with another query's rows
 * (electric-sql/pglite#1046; found by test/chaos/embedded-faults.test.ts as a valid API key read as
 * unknown). Unpatched, this mix gave 1124 wrong answers and 748 errors out of 3000.
 */
let dir: string;
let embedded: EmbeddedPostgres;
let pool: pg.Pool;

beforeAll(async () => {
  dir = await mkdtemp(join(tmpdir(), 'malipo-pglite-sessions-'));
  embedded = await startEmbeddedPostgres({ dataDir: dir });
  const setup = new pg.Client({ connectionString: embedded.url });
  await setup.connect();
  await setup.query('CREATE TABLE t (id int PRIMARY KEY, v text)');
  await setup.query(`INSERT INTO t SELECT g, 'v' || g FROM generate_series(1, 5000) g`);
  await setup.end();
  pool = new pg.Pool({ connectionString: embedded.url, max: 8 });
}, 60_000);
afterAll(async () => {
  await pool?.end();
  await embedded?.stop();
  await rm(dir, { recursive: true, force: true });
});

describe('the embedded database over the wire protocol', () => {
  it('answers each of 8 concurrent connections with its own rows, in and out of transactions', async () => {
    let wrong = 0;
    const errors: string[] = [];
    await Promise.all(
      Array.from({ length: 3000 }, async (_, i) => {
        const id = 1 + (i % 5000);
        try {
          switch (i % 4) {
            case 0: {
              const r = await pool.query('SELECT v FROM t WHERE id = $1', [id]);
              if (r.rows[0]?.v !== `v${id}`) wrong++;
              break;
            }
            case 1: {
              const r = await pool.query('SELECT count(*)::int AS n FROM t WHERE id <= $1', [i % 5000]);
              if (r.rows[0]?.n !== i % 5000) wrong++;
              break;
            }
            case 2: {
              const c = await pool.connect();
              try {
                await c.query('BEGIN');
                const r = await c.query('SELECT $1::text AS s', [`tx${i}`]);
                if (r.rows[0]?.s !== `tx${i}`) wrong++;
                await c.query('COMMIT');
              } finally {
                c.release();
              }
              break;
            }
            default: {
              const r = await pool.query('SELECT $1::int * 2 AS d, $2::text AS x', [i, 'q']);
              if (r.rows[0]?.d !== i * 2) wrong++;
            }
          }
        } catch (err) {
          errors.push((err as Error).message);
        }
      }),
    );
    expect({ wrong, errors: [...new Set(errors)] }).toEqual({ wrong: 0, errors: [] });
  }, 120_000);
});
