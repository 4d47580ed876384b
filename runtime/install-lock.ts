import { mkdir, readFile, rm, writeFile } from 'node:fs/promises';
import { dirname, join } from 'node:path';

/**
 * One process at a time gets a one-time tool (the Temporal CLI, the cluster binaries): two
 * `npm test` started together, or the embedded start beside a test run, would otherwise both
 * download or build the same thing (a Go build of 10 minutes twice, on the same cores).
 *
 * The lock is the folder `lock` (mkdir is atomic) holding the owner's pid. A waiter
 * polls; a lock whose owner no longer runs (killed mid-build) is taken over. `fn` runs under the
 * lock and should first check again whether the tool appeared while it waited.
 */
export async function withInstallLock<T>(
  lock: string,
  what: string,
  fn: () => Promise<T>,
  opts: { log?: (msg: string) => void; pollMs?: number; reportEveryMs?: number } = {},
): Promise<T> {
  const pollMs = opts.pollMs ?? 1_000;
  const reportEveryMs = opts.reportEveryMs ?? 30_000;
  await mkdir(dirname(lock), { recursive: true });
  const started = Date.now();
  let reported = 0;
  for (;;) {
    try {
      await mkdir(lock);
      break;
    } catch (err) {
      if ((err as NodeJS.ErrnoException).code !== 'EEXIST') throw err;
    }
    const owner = await readOwner(lock);
    if (owner === undefined) {
      // Just created, the pid not yet written: give its owner a moment, unless it stays that way.
      if (Date.now() - started > 10_000) await rm(lock, { recursive: true, force: true });
    } else if (!isRunning(owner)) {
      await rm(lock, { recursive: true, force: true });
      continue;
    }
    const waited = Date.now() - started;
    if (waited - reported >= reportEveryMs) {
      reported = waited;
      opts.log?.(`Another process${owner ? ` (pid ${owner})` : ''} is getting ${what}; waiting for it (${Math.round(waited / 1000)} s so far).`);
    }
    await new Promise((resolve) => setTimeout(resolve, pollMs));
  }
  try {
    await writeFile(join(lock, 'pid'), String(process.pid));
    return await fn();
  } finally {
    await rm(lock, { recursive: true, force: true });
  }
}

async function readOwner(lock: string): Promise<number | undefined> {
  const text = await readFile(join(lock, 'pid'), 'utf8').catch(() => '');
  const pid = Number.parseInt(text, 10);
  return Number.isSafeInteger(pid) && pid > 0 ? pid : undefined;
}

function isRunning(pid: number): boolean {
  if (pid === process.pid) return true;
  try {
    process.kill(pid, 0);
    return true;
  } catch (err) {
    return (err as NodeJS.ErrnoException).code === 'EPERM';
  }
}
