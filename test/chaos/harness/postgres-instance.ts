import { execFile, spawn, type ChildProcess } from 'node:child_process';
import { chown, mkdir, mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { createInterface } from 'node:readline';
import { promisify } from 'node:util';
import pg from 'pg';
import { freePort } from '../../../runtime/cluster/ports.js';

const run = promisify(execFile);
const pgBin = process.env.CHAOS_PG_BIN ?? '/usr/lib/postgresql/15/bin';

/**
 * A PostgreSQL server of the scenario's own, so that it can be killed: initdb into a temporary
 * folder, trust auth on 127.0.0.1 and a free port. PostgreSQL refuses to run as root, so initdb
 * and the server run as the `postgres` OS user (the folder is chowned to it).
 */
export interface PostgresInstance {
  /** `postgres://postgres@127.0.0.1:<port>/postgres`. */
  url: string;
  port: number;
  /** The URL of another database on this server. */
  urlOf(database: string): string;
  /** Every line the server printed, across restarts (its log). */
  readonly lines: readonly string[];
  /** The postmaster's pid (changes at each restart). */
  readonly pid: number;
  /** SIGKILL to the postmaster and every backend at once (its process group): a crash, not a shutdown. */
  kill9(): Promise<void>;
  /** Starts the server again on the same folder and port (crash recovery replays the WAL); resolves when it accepts queries. */
  restart(): Promise<void>;
  /** Fast shutdown, then the folder is removed. */
  stop(): Promise<void>;
}

async function postgresUser(): Promise<{ uid: number; gid: number }> {
  const [uid, gid] = await Promise.all([run('id', ['-u', 'postgres']), run('id', ['-g', 'postgres'])]);
  return { uid: Number(uid.stdout.trim()), gid: Number(gid.stdout.trim()) };
}

export async function startPostgresInstance(opts: { maxConnections?: number; onLine?: (line: string) => void } = {}): Promise<PostgresInstance> {
  const user = process.getuid?.() === 0 ? await postgresUser() : undefined;
  const root = await mkdtemp(join(tmpdir(), 'malipo-chaos-pg-'));
  const dataDir = join(root, 'data');
  const socketDir = join(root, 'socket');
  await mkdir(socketDir);
  if (user) {
    await chown(root, user.uid, user.gid);
    await chown(socketDir, user.uid, user.gid);
  }
  const asPostgres = user ? { uid: user.uid, gid: user.gid } : {};
  await new Promise<void>((resolve, reject) => {
    const init = spawn(join(pgBin, 'initdb'), ['-D', dataDir, '-A', 'trust', '-U', 'postgres', '-E', 'UTF8', '--no-sync'], { ...asPostgres, stdio: ['ignore', 'pipe', 'pipe'] });
    let out = '';
    init.stdout!.on('data', (c: Buffer) => (out += c.toString()));
    init.stderr!.on('data', (c: Buffer) => (out += c.toString()));
    init.once('error', reject);
    init.once('exit', (code) => (code === 0 ? resolve() : reject(new Error(`initdb failed (${code}):\n${out}`))));
  });
  const port = await freePort();
  const lines: string[] = [];
  let child: ChildProcess | undefined;

  const start = async () => {
    const args = [
      '-D', dataDir, '-p', String(port), '-k', socketDir,
      '-c', 'listen_addresses=127.0.0.1',
      '-c', `max_connections=${opts.maxConnections ?? 400}`,
      '-c', 'log_line_prefix=%m [%p] ',
    ];
    // Its own process group: kill9() takes the postmaster and its backends down together.
    const c = spawn(join(pgBin, 'postgres'), args, { ...asPostgres, detached: true, stdio: ['ignore', 'pipe', 'pipe'] });
    for (const stream of [c.stdout!, c.stderr!]) {
      createInterface({ input: stream }).on('line', (line) => {
        lines.push(line);
        opts.onLine?.(line);
      });
    }
    child = c;
    await waitUntilReady(`postgres://postgres@127.0.0.1:${port}/postgres`, c, 60_000);
  };

  const exited = (c: ChildProcess) => (c.exitCode !== null || c.signalCode !== null ? Promise.resolve() : new Promise<void>((r) => c.once('exit', () => r())));

  await start();
  const url = `postgres://postgres@127.0.0.1:${port}/postgres`;
  return {
    url,
    port,
    urlOf: (database) => `postgres://postgres@127.0.0.1:${port}/${database}`,
    lines,
    get pid() {
      return child?.pid ?? 0;
    },
    async kill9() {
      const c = child!;
      try {
        process.kill(-c.pid!, 'SIGKILL');
      } catch {
        // Already gone.
      }
      await exited(c);
      // Backends notice at once, but wait until none holds the port or shared memory any more.
      await waitForNoBackends(dataDir);
    },
    restart: start,
    async stop() {
      const c = child;
      if (c && c.exitCode === null && c.signalCode === null) {
        c.kill('SIGINT'); // fast shutdown
        const timer = setTimeout(() => c.kill('SIGKILL'), 15_000);
        await exited(c);
        clearTimeout(timer);
      }
      await rm(root, { recursive: true, force: true });
    },
  };
}

async function waitUntilReady(url: string, c: ChildProcess, timeoutMs: number): Promise<void> {
  const deadline = Date.now() + timeoutMs;
  let last = '';
  for (;;) {
    if (c.exitCode !== null || c.signalCode !== null) throw new Error(`postgres exited (${c.signalCode ?? c.exitCode}) before it accepted connections: ${last}`);
    const client = new pg.Client({ connectionString: url, connectionTimeoutMillis: 2_000 });
    try {
      await client.connect();
      await client.query('SELECT 1');
      return;
    } catch (err) {
      last = (err as Error).message;
    } finally {
      await client.end().catch(() => undefined);
    }
    if (Date.now() > deadline) throw new Error(`postgres did not accept queries within ${timeoutMs} ms: ${last}`);
    await new Promise((r) => setTimeout(r, 100));
  }
}

/** Waits until no process of the data folder is left (`pgrep -f <dataDir>`): a restart would find its shared memory in use. */
async function waitForNoBackends(dataDir: string): Promise<void> {
  const deadline = Date.now() + 20_000;
  while (Date.now() < deadline) {
    const found = await run('pgrep', ['-f', dataDir]).then((r) => r.stdout.trim(), () => '');
    if (!found) return;
    await new Promise((r) => setTimeout(r, 100));
  }
}
