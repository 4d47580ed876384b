import { sql, type DatabasePool } from 'slonik';
import { z } from 'zod';

const referenceRow = z.object({ kes_per_usdt: z.string(), source: z.string(), fetched_at_ms: z.number() });

/** The last live USDT/KES rate that passed every check (services/rates/rate-service.ts), if any. */
export async function loadRateReference(pool: DatabasePool): Promise<{ kesPerUsdt: string; source: string; fetchedAtMs: number } | undefined> {
  const row = await pool.maybeOne(sql.type(referenceRow)`
    SELECT kes_per_usdt::text AS kes_per_usdt, source, (extract(epoch FROM fetched_at) * 1000)::float8 AS fetched_at_ms
    FROM kes_rate_reference WHERE singleton`);
  return row ? { kesPerUsdt: row.kes_per_usdt.replace(/\.?0+$/, ''), source: row.source, fetchedAtMs: Math.round(row.fetched_at_ms) } : undefined;
}

/** Keeps the newer of the stored and the given rate (API processes save concurrently). */
export async function saveRateReference(pool: DatabasePool, rate: { kesPerUsdt: string; source: string; fetchedAtMs: number }): Promise<void> {
  await pool.query(sql.unsafe`
    INSERT INTO kes_rate_reference (singleton, kes_per_usdt, source, fetched_at)
    VALUES (true, ${rate.kesPerUsdt}, ${rate.source}, to_timestamp(${rate.fetchedAtMs / 1000}))
    ON CONFLICT (singleton) DO UPDATE SET kes_per_usdt = EXCLUDED.kes_per_usdt, source = EXCLUDED.source, fetched_at = EXCLUDED.fetched_at
    WHERE kes_rate_reference.fetched_at < EXCLUDED.fetched_at`);
}
