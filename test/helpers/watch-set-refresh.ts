import { openPool } from '../../db/pool.js';
import { WatchSet, type Family } from '../../rails/chain/watch-set.js';
import type { Environment } from '../../domain/environment.js';

/**
 * Run as its own process by `refreshInChild` (watch-set-child.ts): loads a fresh watch set, as
 * a worker does at start and at every full reload, and prints its size. A refresh that holds the
 * event loop would hang the test process itself; in a child it can be stopped.
 */
const [databaseUrl, family, environment] = process.argv.slice(2) as [string, Family, Environment];
const pool = await openPool(databaseUrl, 1);
const set = new WatchSet(family, environment);
await set.refresh(pool, Date.now());
process.stdout.write(`${JSON.stringify({ size: set.size })}\n`);
await pool.end();
