import { spawn, type ChildProcess } from 'node:child_process';
import { mkdir } from 'node:fs/promises';
import { connect } from 'node:net';
import { join } from 'node:path';
import { allSearchAttributeKeys } from '../domain/search-attributes.js';

export interface EmbeddedTemporal {
  address: string;
  uiUrl: string;
  stop(): Promise<void>;
}

/** Search attribute flags for `temporal server start-dev`: `--search-attribute Name=Keyword`. */
export function searchAttributeArgs(): string[] {
  return allSearchAttributeKeys.flatMap((k) => ['--search-attribute', `${k.name}=Keyword`]);
}

/**
 * Runs `temporal server start-dev` with its SQLite file under the data directory (so workflows
 * survive a restart) and the Web UI on. Resolves once the frontend port accepts connections.
 */
export async function startEmbeddedTemporal(opts: {
  cliPath: string;
  dataDir: string;
  port: number;
  uiPort: number;
  namespace: string;
  onExit?: (code: number | null) => void;
}): Promise<EmbeddedTemporal> {
  await mkdir(opts.dataDir, { recursive: true });
  const args = [
    'server', 'start-dev',
    '--db-filename', join(opts.dataDir, 'temporal.sqlite'),
    '--ip', '127.0.0.1',
    '--port', String(opts.port),
    '--ui-port', String(opts.uiPort),
    '--namespace', opts.namespace,
    '--log-level', 'error',
    ...searchAttributeArgs(),
  ];
  const child = spawn(opts.cliPath, args, { stdio: ['ignore', 'ignore', 'pipe'] });
  let stderr = '';
  child.stderr?.on('data', (d: Buffer) => {
    stderr = (stderr + d.toString()).slice(-4000);
  });
  let exited = false;
  child.on('exit', (code) => {
    exited = true;
    opts.onExit?.(code);
  });
  await waitForPort(opts.port, 60_000, () => (exited ? `temporal exited: ${stderr}` : undefined));
  return {
    address: `127.0.0.1:${opts.port}`,
    uiUrl: `http://127.0.0.1:${opts.uiPort}`,
    stop: () => stopChild(child),
  };
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

function canConnect(port: number): Promise<boolean> {
  return new Promise((resolve) => {
    const socket = connect({ port, host: '127.0.0.1' });
    socket.once('connect', () => {
      socket.destroy();
      resolve(true);
    });
    socket.once('error', () => resolve(false));
  });
}
