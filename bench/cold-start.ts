// Time from `malipo start` to "Malipo is running." on the embedded default: a first start (fresh
// data directory: PGlite initdb, Temporal SQLite, migrations) and a restart on the same data.
import { spawn } from 'node:child_process';
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { freePort } from '../test/helpers/ports.js';


async function startOnce(env: NodeJS.ProcessEnv): Promise<number> {
  const t0 = performance.now();
  const child = spawn(process.execPath, ['bin/malipo.mjs', 'start'], { env, stdio: ['ignore', 'pipe', 'pipe'] });
  await new Promise<void>((resolve, reject) => {
    let out = '';
    child.stdout.on('data', (d: Buffer) => {
      out += d.toString();
      if (out.includes('Malipo is running.')) resolve();
    });
    child.once('exit', (code) => reject(new Error(`exited ${code}`)));
  });
  const ms = performance.now() - t0;
  const exited = new Promise((r) => child.once('exit', r));
  child.kill('SIGINT');
  await exited;
  return Math.round(ms);
}

export async function benchColdStart() {
  const dataDir = await mkdtemp(join(tmpdir(), 'malipo-cold-'));
  const env: NodeJS.ProcessEnv = { ...process.env, DATA_DIR: dataDir, PORT: String(await freePort()), TEMPORAL_PORT: String(await freePort()), TEMPORAL_UI_PORT: String(await freePort()), LOG_LEVEL: 'warn' };
  delete env.DATABASE_URL;
  delete env.TEMPORAL_ADDRESS;
  try {
    const firstStartMs = await startOnce(env);
    const restartMs = await startOnce(env);
    return { firstStartMs, restartMs };
  } finally {
    await rm(dataDir, { recursive: true, force: true });
  }
}
