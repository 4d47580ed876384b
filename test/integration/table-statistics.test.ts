import { afterAll, beforeAll, describe, expect, it } from '@jest/globals';
import pg from 'pg';
import { sql, type DatabasePool } from 'slonik';
import { z } from 'zod';
import { openPool } from '../../db/pool.js';
import { refreshStaleStatistics } from '../../services/system/table-statistics.js';
import { runStatisticsKeeper } from '../../worker/table-statistics.js';
import { createTestDatabase } from '../helpers/database.js';
import { eventually } from '../helpers/wait.js';

/**
 * The workers refresh the planner statistics autovacuum did not (services/system/table-statistics.ts),
 * on a real PostgreSQL. Autovacuum is turned off for the probe tables, so what analyzes them here
 * is the keeper alone, whatever the server's own setting.
 */
let db: { url: string; drop: () => Promise<void> };
let pool: DatabasePool;
let writer: pg.Client;

const statsRow = z.object({ n_mod_since_analyze: z.number(), analyzed: z.boolean() });
const stats = (table: string) => pool.one(sql.type(statsRow)`
  SELECT n_mod_since_analyze::int AS n_mod_since_analyze, last_analyze IS NOT NULL AS analyzed FROM pg_stat_user_tables WHERE relname = ${table}`);

/** Inserts `rows` rows into `table` and waits until the server's statistics count them. */
async function write(table: string, rows: number): Promise<void> {
  const before = (await stats(table)).n_mod_since_analyze;
  await writer.query(`INSERT INTO ${quoted(table)} (v) SELECT md5(g::text) FROM generate_series(1, ${rows}) g`);
  // The writing session reports its counts when it is next idle; this makes that now.
  await writer.query('SELECT pg_stat_force_next_flush()');
  await writer.query('SELECT 1');
  await eventually(async () => ((await stats(table)).n_mod_since_analyze >= before + rows ? true : undefined), `${table} counted ${rows} more rows`);
}

const quoted = (name: string) => `"${name.replace(/"/g, '""')}"`;

async function probeTable(name: string): Promise<string> {
  await writer.query(`CREATE TABLE ${quoted(name)} (id bigserial PRIMARY KEY, v text NOT NULL) WITH (autovacuum_enabled = false)`);
  return name;
}

beforeAll(async () => {
  db = await createTestDatabase();
  pool = await openPool(db.url, 2);
  writer = new pg.Client({ connectionString: db.url });
  await writer.connect();
}, 60_000);
afterAll(async () => {
  await writer?.end();
  await pool?.end();
  await db?.drop();
});

describe('refreshing stale planner statistics', () => {
  it('analyzes a table changed past the threshold that nobody analyzed, and then leaves it alone', async () => {
    const table = await probeTable('stats_probe_stale');
    await write(table, 5_000);
    expect(await stats(table)).toMatchObject({ analyzed: false });

    expect(await refreshStaleStatistics(pool)).toContain(table);
    await eventually(async () => ((await stats(table)).analyzed ? true : undefined), 'the probe analyzed');
    expect((await stats(table)).n_mod_since_analyze).toBe(0);
    // Analyzed and unchanged since: nothing to do.
    expect(await refreshStaleStatistics(pool)).not.toContain(table);
  });

  it('leaves a table changed below the threshold (50 rows plus a tenth of the table)', async () => {
    const table = await probeTable('stats_probe_small');
    await write(table, 40);
    expect(await refreshStaleStatistics(pool)).not.toContain(table);
    expect(await stats(table)).toMatchObject({ analyzed: false });
  });

  it('analyzes a table one row past the threshold, and not at it', async () => {
    // An empty table given 55 rows: changed 55 times, threshold 50 + 55 / 10 = 55 (integer
    // division, as autovacuum's own): not past it. One more row: 56 changes against 55.
    const table = await probeTable('stats_probe_boundary');
    await write(table, 55);
    expect(await refreshStaleStatistics(pool, { quietSeconds: 0 })).not.toContain(table);
    await write(table, 1);
    expect(await refreshStaleStatistics(pool, { quietSeconds: 0 })).toContain(table);
    await eventually(async () => ((await stats(table)).analyzed ? true : undefined), 'the probe analyzed');
  });

  it('does not wait for a table another session is vacuuming or analyzing: it is found again by the next pass', async () => {
    const table = await probeTable('stats_probe_locked');
    await write(table, 1_000);
    // The lock a running VACUUM or ANALYZE (autovacuum's, another worker's) holds.
    const holder = new pg.Client({ connectionString: db.url });
    await holder.connect();
    try {
      await holder.query('BEGIN');
      await holder.query(`LOCK TABLE ${quoted(table)} IN SHARE UPDATE EXCLUSIVE MODE`);
      // The pass returns while the lock is held, and nothing ever queued behind the lock (an
      // ANALYZE without SKIP_LOCKED would wait there until its statement timeout).
      let done = false;
      const pass = refreshStaleStatistics(pool, { quietSeconds: 0 }).finally(() => {
        done = true;
      });
      const queued = (async () => {
        while (!done) {
          const { rows } = await writer.query(
            'SELECT count(*)::int AS n FROM pg_locks l JOIN pg_class c ON c.oid = l.relation WHERE c.relname = $1 AND NOT l.granted', [table]);
          if (rows[0].n > 0) return 'queued behind the lock';
          await new Promise((resolve) => setTimeout(resolve, 10));
        }
        return 'returned';
      })();
      expect(await Promise.race([pass.then(() => 'returned'), queued])).toBe('returned');
      await pass;
      expect(await stats(table)).toMatchObject({ analyzed: false });
    } finally {
      await holder.query('ROLLBACK').catch(() => undefined);
      await holder.end();
    }
    expect(await refreshStaleStatistics(pool, { quietSeconds: 0 })).toContain(table);
    await eventually(async () => ((await stats(table)).analyzed ? true : undefined), 'the probe analyzed once the lock was gone');
  });

  it('waits out the quiet period after an analyze (autovacuum\'s own, or another worker\'s), then analyzes again', async () => {
    const table = await probeTable('stats_probe_quiet');
    await write(table, 1_000);
    expect(await refreshStaleStatistics(pool)).toContain(table);
    await eventually(async () => ((await stats(table)).analyzed ? true : undefined), 'the probe analyzed');
    // Changed again past the threshold, but analyzed moments ago: left for now.
    await write(table, 1_000);
    expect(await refreshStaleStatistics(pool, { quietSeconds: 3_600 })).not.toContain(table);
    // Once the quiet period has passed (0 s here), it is analyzed again.
    expect(await refreshStaleStatistics(pool, { quietSeconds: 0 })).toContain(table);
    await eventually(async () => ((await stats(table)).n_mod_since_analyze === 0 ? true : undefined), 'the probe analyzed again');
  });

  it('runs beside the workers on its own: its next pass analyzes a stale table', async () => {
    const table = await probeTable('stats_probe_keeper');
    await write(table, 2_000);
    const keeper = runStatisticsKeeper({ pool }, 200);
    try {
      await eventually(async () => ((await stats(table)).analyzed ? true : undefined), 'the keeper analyzed the probe');
    } finally {
      await keeper.stop();
    }
  });

  it('stops between tables when its worker stops', async () => {
    const table = await probeTable('stats_probe_stopped');
    await write(table, 1_000);
    expect(await refreshStaleStatistics(pool, { quietSeconds: 0, isStopped: () => true })).toEqual([]);
    expect(await stats(table)).toMatchObject({ analyzed: false });
  });

  it('names a table as an identifier, never as SQL text', async () => {
    // A table whose name needs quoting is analyzed as that table.
    const table = await probeTable('stats probe"; DROP TABLE stats_probe_small; --');
    await write(table, 500);
    expect(await refreshStaleStatistics(pool, { quietSeconds: 0 })).toContain(table);
    await eventually(async () => ((await stats(table)).analyzed ? true : undefined), 'the oddly named table analyzed');
    expect(await stats('stats_probe_small')).toBeDefined();
  });
});
