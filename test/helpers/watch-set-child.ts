import { spawn } from 'node:child_process';
import type { Family } from '../../rails/chain/watch-set.js';
import type { Environment } from '../../domain/environment.js';

/**
 * Loads a fresh watch set in a child process and answers its size, or fails when the load has
 * not finished after `guardMs`. This is a guard against a hang, not a timing: a load that holds
 * the event loop (deriving an address per index up to the highest one) would otherwise block the
 * test process so that not even jest's own timeout could fire.
 */
export function refreshInChild(databaseUrl: string, family: Family, env: Environment, guardMs = 90_000): Promise<number> {
  const child = spawn(process.execPath, ['bin/run-ts.mjs', 'test/helpers/watch-set-refresh.ts', databaseUrl, family, env], {
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  let out = '';
  child.stdout.on('data', (d: Buffer) => (out += d.toString()));
  child.stderr.on('data', (d: Buffer) => (out += d.toString()));
  return new Promise((resolve, reject) => {
    const timer = setTimeout(() => {
      child.kill('SIGKILL');
      reject(new Error(`the watch set load had not finished after ${guardMs} ms`));
    }, guardMs);
    child.once('exit', (code) => {
      clearTimeout(timer);
      const m = /\{"size":(\d+)\}/.exec(out);
      if (code === 0 && m) resolve(Number(m[1]));
      else reject(new Error(`the watch set load failed (exit ${code}):\n${out}`));
    });
  });
}
