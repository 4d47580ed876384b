import { execFile, spawn, type ChildProcess } from 'node:child_process';
import { mkdir, readFile, rm, writeFile } from 'node:fs/promises';
import { connect } from 'node:net';
import { join } from 'node:path';
import { promisify } from 'node:util';
import { allSearchAttributeKeys, cliTypeOf } from '../domain/search-attributes.js';
import { freeLoopbackPort, startReadOnlyUi, type ReadOnlyUi } from './read-only-ui.js';

const run = promisify(execFile);

export interface EmbeddedTemporal {
  address: string;
  uiUrl: string;
  /** The dev server's current process id (it changes when the supervisor restarts it). */
  pid(): number | undefined;
  stop(): Promise<void>;
}

/** Where the running dev server's process id is kept, so the next start can find an orphan. */
const pidFile = (dataDir: string) => join(dataDir, 'temporal.pid');

/** Search attribute flags for `temporal server start-dev`: `--search-attribute Name=Keyword` (or `=Datetime`). */
export function searchAttributeArgs(): string[] {
  return allSearchAttributeKeys.flatMap((k) => ['--search-attribute', `${k.name}=${cliTypeOf(k)}`]);
}

/** The SQLite settings the embedded dev server runs its file with (see startEmbeddedTemporal). */
export const sqlitePragmaArgs = ['--sqlite-pragma', 'journal_mode=wal', '--sqlite-pragma', 'synchronous=full'] as const;

/**
 * Runs `temporal server start-dev` with its SQLite file under the data directory (so workflows
 * survive a restart) and the Web UI on, read-only behind runtime/read-only-ui.ts on `uiPort`.
 * Resolves once the frontend port accepts connections.
 *
 * The dev server is supervised for the life of the service:
 * - a dev server left behind by a service that was killed (`kill -9` orphans its children, and
 *   the orphan keeps the port and the SQLite file) is recognised by `DATA_DIR/temporal.pid` and
 *   stopped before a new one starts, never silently reused;
 * - a port already taken by anything else is an error naming it, not a server we adopt;
 * - a dev server that dies while the service runs is started again on the same port and file,
 *   with a backoff; the worker and client reconnect by themselves.
 */
export async function startEmbeddedTemporal(opts: {
  cliPath: string;
  dataDir: string;
  port: number;
  uiPort: number;
  namespace: string;
  onExit?: (code: number | null) => void;
  log?: (level: 'info' | 'warn', message: string) => void;
}): Promise<EmbeddedTemporal> {
  await mkdir(opts.dataDir, { recursive: true });
  const dbFile = join(opts.dataDir, 'temporal.sqlite');
  // The dev server's UI listens on an internal port; people open the read-only proxy on `uiPort`.
  const internalUiPort = await freeLoopbackPort();
  const args = [
    'server', 'start-dev',
    '--db-filename', dbFile,
    '--ip', '127.0.0.1',
    '--port', String(opts.port),
    '--ui-port', String(internalUiPort),
    '--namespace', opts.namespace,
    '--log-level', 'error',
    // A write-ahead log instead of SQLite's default rollback journal (a journal file created,
    // synced and deleted on every commit): a third less of the server's CPU per workflow here
    // (docs/benchmarks.md). `synchronous=full` keeps every commit synced to disk before it is
    // acknowledged, as the rollback journal did: a power cut loses no acknowledged workflow step.
    // The mode is kept in the file, so a data directory from before switches on its next start.
    ...sqlitePragmaArgs,
    ...searchAttributeArgs(),
  ];
  const reaped = await stopOrphan(opts.dataDir, dbFile);
  if (reaped) opts.log?.('warn', `stopped the Temporal dev server (pid ${reaped}) a previous run left behind`);
  for (const port of [opts.port, opts.uiPort]) {
    if (await canConnect(port)) {
      throw new Error(`127.0.0.1:${port} is already in use by another process: stop it, or choose other ports with TEMPORAL_PORT and TEMPORAL_UI_PORT.`);
    }
  }

  let stopping = false;
  let child: ChildProcess;
  let restartTimer: NodeJS.Timeout | undefined;
  let backoffMs = 1_000;
  const launch = async (): Promise<void> => {
    const c = spawn(opts.cliPath, args, { stdio: ['ignore', 'ignore', 'pipe'] });
    child = c;
    let stderr = '';
    c.stderr?.on('data', (d: Buffer) => {
      stderr = (stderr + d.toString()).slice(-4000);
    });
    let exited = false;
    let ready = false;
    c.on('exit', (code, signal) => {
      exited = true;
      opts.onExit?.(code);
      if (stopping || !ready) return;
      opts.log?.('warn', `the Temporal dev server exited (${signal ?? `code ${code}`}); starting it again in ${backoffMs} ms`);
      restartTimer = setTimeout(() => void relaunch(), backoffMs);
      backoffMs = Math.min(backoffMs * 2, 15_000);
    });
    if (c.pid) await writeFile(pidFile(opts.dataDir), JSON.stringify({ pid: c.pid, dbFile }));
    await waitForPort(opts.port, 60_000, () => (exited ? `temporal exited: ${stderr}` : stopping ? 'stopping' : undefined));
    ready = true;
    // Healthy for a minute: the next crash restarts quickly again.
    setTimeout(() => child === c && !exited && (backoffMs = 1_000), 60_000).unref();
  };
  const relaunch = async (): Promise<void> => {
    if (stopping) return;
    try {
      await launch();
      opts.log?.('info', `the Temporal dev server is running again (pid ${child.pid})`);
    } catch (err) {
      if (stopping) return;
      opts.log?.('warn', `could not start the Temporal dev server again: ${(err as Error).message}; retrying in ${backoffMs} ms`);
      await stopChild(child, 2_000);
      restartTimer = setTimeout(() => void relaunch(), backoffMs);
      backoffMs = Math.min(backoffMs * 2, 15_000);
    }
  };
  await launch();
  let ui: ReadOnlyUi;
  try {
    ui = await startReadOnlyUi({ port: opts.uiPort, targetPort: internalUiPort });
  } catch (err) {
    stopping = true;
    await stopChild(child!);
    await rm(pidFile(opts.dataDir), { force: true });
    throw err;
  }
  return {
    address: `127.0.0.1:${opts.port}`,
    uiUrl: `http://127.0.0.1:${opts.uiPort}`,
    pid: () => (child.exitCode === null && child.signalCode === null ? child.pid : undefined),
    async stop() {
      stopping = true;
      clearTimeout(restartTimer);
      await ui.close();
      await stopChild(child);
      await rm(pidFile(opts.dataDir), { force: true });
    },
  };
}

/**
 * Stops the dev server a previous run of this data directory left behind, if one is alive: the
 * recorded process must still run `temporal` on this SQLite file (a reused pid is left alone).
 * Returns its pid when it stopped one.
 */
async function stopOrphan(dataDir: string, dbFile: string): Promise<number | undefined> {
  let pid: number;
  try {
    pid = (JSON.parse(await readFile(pidFile(dataDir), 'utf8')) as { pid: number }).pid;
  } catch {
    return undefined;
  }
  const command = await commandLineOf(pid);
  if (!command || !command.includes('start-dev') || !command.includes(dbFile)) {
    await rm(pidFile(dataDir), { force: true });
    return undefined;
  }
  for (const [signal, waitMs] of [['SIGTERM', 10_000], ['SIGKILL', 5_000]] as const) {
    try {
      process.kill(pid, signal);
    } catch {
      break; // already gone
    }
    const deadline = Date.now() + waitMs;
    while (alive(pid) && Date.now() < deadline) await new Promise((r) => setTimeout(r, 50));
    if (!alive(pid)) break;
  }
  if (alive(pid)) throw new Error(`the Temporal dev server a previous run left behind (pid ${pid}) does not stop`);
  await rm(pidFile(dataDir), { force: true });
  return pid;
}

/** Whether a process with this pid runs (signal 0 only checks). */
export function alive(pid: number): boolean {
  try {
    process.kill(pid, 0);
    return true;
  } catch {
    return false;
  }
}

/** A process's command line (Linux /proc, else `ps`), or undefined when it does not run. */
async function commandLineOf(pid: number): Promise<string | undefined> {
  if (!alive(pid)) return undefined;
  try {
    return (await readFile(`/proc/${pid}/cmdline`, 'utf8')).split('\0').join(' ');
  } catch {
    return run('ps', ['-o', 'command=', '-p', String(pid)]).then((r) => r.stdout.trim() || undefined, () => undefined);
  }
}

export async function stopChild(child: ChildProcess, graceMs = 10_000): Promise<void> {
  if (child.exitCode !== null || child.signalCode !== null) return;
  const done = new Promise<void>((resolve) => child.once('exit', () => resolve()));
  child.kill('SIGTERM');
  const timer = setTimeout(() => child.kill('SIGKILL'), graceMs);
  await done;
  clearTimeout(timer);
}

export async function waitForPort(port: number, timeoutMs: number, failed: () => string | undefined): Promise<void> {
  const deadline = Date.now() + timeoutMs;
  for (;;) {
    const why = failed();
    if (why) throw new Error(why);
    if (await canConnect(port)) return;
    if (Date.now() > deadline) throw new Error(`nothing listens on 127.0.0.1:${port} after ${timeoutMs} ms`);
    await new Promise((r) => setTimeout(r, 100));
  }
}

/** Whether something accepts TCP connections on 127.0.0.1:`port`. */
export function canConnect(port: number): Promise<boolean> {
  return new Promise((resolve) => {
    const socket = connect({ port, host: '127.0.0.1' });
    socket.once('connect', () => {
      socket.destroy();
      resolve(true);
    });
    socket.once('error', () => resolve(false));
  });
}
