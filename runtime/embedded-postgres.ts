import { mkdir, readFile, rm, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { PGlite } from '@electric-sql/pglite';
import { PGLiteSocketServer } from '@electric-sql/pglite-socket';

/**
 * The embedded database: PGlite on disk under `DATA_DIR/pglite`, served over the Postgres wire
 * protocol so slonik/pg connect to it exactly as to a real server. PGlite admits one process,
 * so the running service writes its address to `DATA_DIR/pglite.json`; the CLI reads it and
 * connects through the socket instead of opening the files.
 */
export interface EmbeddedPostgres {
  url: string;
  stop(): Promise<void>;
}

const addressFile = (dataDir: string) => join(dataDir, 'pglite.json');

export async function startEmbeddedPostgres(opts: { dataDir: string; port?: number }): Promise<EmbeddedPostgres> {
  await mkdir(opts.dataDir, { recursive: true });
  const db = await PGlite.create({ dataDir: join(opts.dataDir, 'pglite') });
  // Never 5432: a real PostgreSQL may run there. Port 0 lets the OS pick a free one.
  const server = new PGLiteSocketServer({ db, host: '127.0.0.1', port: opts.port ?? 0, maxConnections: 16 });
  await server.start();
  const port = Number(/:(\d+)$/.exec(server.getServerConn())?.[1]);
  const url = `postgres://postgres@127.0.0.1:${port}/postgres?sslmode=disable`;
  await writeFile(addressFile(opts.dataDir), JSON.stringify({ url, pid: process.pid }));
  return {
    url,
    async stop() {
      await rm(addressFile(opts.dataDir), { force: true });
      await server.stop();
      await db.close();
    },
  };
}

/** The address of a running service's embedded database, if one is alive. */
export async function findRunningEmbeddedPostgres(dataDir: string): Promise<string | undefined> {
  try {
    const { url, pid } = JSON.parse(await readFile(addressFile(dataDir), 'utf8')) as { url: string; pid: number };
    process.kill(pid, 0);
    return url;
  } catch {
    return undefined;
  }
}
