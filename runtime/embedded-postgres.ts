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
  // Each connection's handler takes the server's queue when it connects: replace it before any does.
  (server as unknown as { queryQueue: SessionQueue }).queryQueue = new SessionQueue(db);
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

/** The extended-protocol messages between which the unnamed statement and portal must stay one client's. */
const extendedProtocol = new Set(['P', 'B', 'D', 'E', 'C', 'H'].map((c) => c.charCodeAt(0)));

interface Queued {
  handlerId: number;
  message: Uint8Array;
  onData: (data: Uint8Array) => void;
  resolve: (bytes: number) => void;
  reject: (err: unknown) => void;
}

/**
 * The socket server's queue, replaced: PGlite is one session, and pglite-socket 0.2.x hands it
 * from one connection to another between any two protocol messages unless a SQL transaction is
 * open. Two pool connections then interleave Parse/Bind/Execute/Sync: one overwrites the other's
 * unnamed prepared statement ("unnamed prepared statement does not exist"), or, when the shapes
 * fit, binds its parameters to the other's query and answers with the wrong rows (a valid API key
 * read as unknown). Its queue also stops for good after one failed message. See
 * electric-sql/pglite#1046. Here a connection keeps the session from its first message until its
 * exchange ends (a Sync or a simple Query) outside a transaction, and a failure fails one message.
 */
export class SessionQueue {
  private waiting: Queued[] = [];
  private owner: number | null = null;
  private pumping = false;

  constructor(private readonly db: PGlite) {}

  enqueue(handlerId: number, message: Uint8Array, onData: (data: Uint8Array) => void): Promise<number> {
    return new Promise((resolve, reject) => {
      this.waiting.push({ handlerId, message, onData, resolve, reject });
      void this.pump();
    });
  }

  getQueueLength(): number {
    return this.waiting.length;
  }

  /** A connection went away: its queued messages fail, and it no longer holds the session. */
  clearQueueForHandler(handlerId: number): void {
    this.waiting = this.waiting.filter((q) => (q.handlerId === handlerId ? (q.reject(new Error('Handler disconnected')), false) : true));
    if (this.owner === handlerId && !this.db.isInTransaction()) this.release();
  }

  /** A connection went away inside a transaction: roll it back so the next connection starts clean. */
  async clearTransactionIfNeeded(handlerId: number): Promise<void> {
    if (this.owner !== handlerId) return;
    if (this.db.isInTransaction()) await this.db.exec('ROLLBACK').catch(() => undefined);
    this.release();
  }

  private release(): void {
    this.owner = null;
    void this.pump();
  }

  private next(): Queued | undefined {
    if (this.owner === null) return this.waiting.shift();
    const at = this.waiting.findIndex((q) => q.handlerId === this.owner);
    return at < 0 ? undefined : this.waiting.splice(at, 1)[0];
  }

  private async pump(): Promise<void> {
    if (this.pumping) return;
    this.pumping = true;
    try {
      for (let item = this.next(); item; item = this.next()) {
        const q = item;
        let bytes = 0;
        try {
          await this.db.runExclusive(() =>
            this.db.execProtocolRawStream(q.message, {
              onRawData: (data) => {
                bytes += data.length;
                q.onData(data);
              },
            }),
          );
          q.resolve(bytes);
        } catch (err) {
          q.reject(err);
        }
        const midExchange = extendedProtocol.has(q.message[0]!);
        this.owner = midExchange || this.db.isInTransaction() ? q.handlerId : null;
      }
    } finally {
      this.pumping = false;
    }
  }
}
