import { execFile } from 'node:child_process';
import { mkdir, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { promisify } from 'node:util';
import type { Client } from '@temporalio/client';
import pg from 'pg';

const run = promisify(execFile);

/**
 * Writes every workflow history matching `query` (all in the namespace by default) to
 * `dir/histories/<workflowId>.json`, with each payload's bytes decoded as UTF-8: what anyone
 * with the Temporal UI reads, in a form a plain text search finds secrets in.
 */
export async function saveHistories(client: Client, dir: string, query?: string): Promise<number> {
  const out = join(dir, 'histories');
  await mkdir(out, { recursive: true });
  let n = 0;
  for await (const wf of client.workflow.list(query ? { query } : undefined)) {
    const history = await client.workflow.getHandle(wf.workflowId, wf.runId).fetchHistory().catch(() => undefined);
    if (!history) continue;
    await writeFile(join(out, `${wf.workflowId.replace(/[^a-zA-Z0-9_.-]+/g, '_')}.${wf.runId}.json`), decodedHistoryText(history));
    n++;
  }
  return n;
}

/**
 * A history as JSON with every payload readable: the SDK's JSON carries payload bytes as
 * base64 (`"data":"…"`), so each is decoded to UTF-8 text in place.
 */
export function decodedHistoryText(history: unknown): string {
  return JSON.stringify(history).replace(/"data":"([A-Za-z0-9+/=]+)"/g, (_m, b64: string) => `"data":${JSON.stringify(Buffer.from(b64, 'base64').toString('utf8'))}`);
}

/**
 * A dump of the database at `url` into `file`: `pg_dump` for a real server; for a server that
 * `pg_dump` cannot read (the embedded PGlite), every row of every table as JSON text.
 */
export async function dumpDatabase(url: string, file: string): Promise<'pg_dump' | 'rows'> {
  try {
    await run('pg_dump', ['--no-owner', '-f', file, url], { maxBuffer: 1 << 28 });
    return 'pg_dump';
  } catch {
    const client = new pg.Client({ connectionString: url });
    await client.connect();
    try {
      const tables = await client.query<{ t: string }>(`SELECT quote_ident(table_schema) || '.' || quote_ident(table_name) AS t FROM information_schema.tables WHERE table_schema NOT IN ('pg_catalog', 'information_schema') AND table_type = 'BASE TABLE'`);
      const lines: string[] = [];
      for (const { t } of tables.rows) {
        const rows = await client.query<{ r: string }>(`SELECT row_to_json(x)::text AS r FROM ${t} x`);
        lines.push(`-- ${t}`, ...rows.rows.map((r) => r.r));
      }
      await writeFile(file, lines.join('\n'));
      return 'rows';
    } finally {
      await client.end();
    }
  }
}
