import { spawn, type ChildProcess } from 'node:child_process';
import { freePort } from './ports.js';

/**
 * `npm start` as a child process on the embedded default: its own data directory and free ports,
 * with the environment's DATABASE_URL and TEMPORAL_ADDRESS removed so nothing outside is used.
 */
export async function embeddedEnv(dataDir: string, extra: NodeJS.ProcessEnv = {}): Promise<NodeJS.ProcessEnv> {
  const env: NodeJS.ProcessEnv = {
    ...process.env,
    DATA_DIR: dataDir,
    PORT: String(await freePort()),
    TEMPORAL_PORT: String(await freePort()),
    TEMPORAL_UI_PORT: String(await freePort()),
    LOG_LEVEL: 'warn',
    ...extra,
  };
  delete env.DATABASE_URL;
  delete env.TEMPORAL_ADDRESS;
  return env;
}

export const startEmbedded = (env: NodeJS.ProcessEnv): ChildProcess =>
  spawn(process.execPath, ['bin/malipo.mjs', 'start'], { env, stdio: ['ignore', 'pipe', 'pipe'] });

/** Resolves with everything printed once `text` appears; rejects on exit or after `timeoutMs`, with the output. */
export function waitForOutput(child: ChildProcess, text: string, timeoutMs: number): Promise<string> {
  return new Promise((resolve, reject) => {
    let out = '';
    const timer = setTimeout(() => reject(new Error(`no "${text}" within ${timeoutMs} ms:\n${out}`)), timeoutMs);
    const onData = (d: Buffer) => {
      out += d.toString();
      if (out.includes(text)) {
        clearTimeout(timer);
        resolve(out);
      }
    };
    child.stdout!.on('data', onData);
    child.stderr!.on('data', onData);
    child.once('exit', (code) => reject(new Error(`exited ${code} before "${text}":\n${out}`)));
  });
}
