import { execFile } from 'node:child_process';
import { access, constants, mkdir } from 'node:fs/promises';
import { homedir } from 'node:os';
import { delimiter, join } from 'node:path';
import { promisify } from 'node:util';

const run = promisify(execFile);

/**
 * The pinned Temporal CLI. v1.5.1 is the newest tag `go install` accepts: later tags carry a
 * `replace` directive in go.mod. It embeds Temporal server 1.29.1 and the Web UI.
 */
export const temporalCliVersion = 'v1.5.1';
export const temporalCliModule = 'github.com/temporalio/cli/cmd/temporal';

export function cacheDir(): string {
  return join(process.env.XDG_CACHE_HOME ?? join(homedir(), '.cache'), 'malipo', `temporal-${temporalCliVersion}`);
}

export async function isExecutable(path: string): Promise<boolean> {
  try {
    await access(path, constants.X_OK);
    return true;
  } catch {
    return false;
  }
}

export async function onPath(name: string): Promise<string | undefined> {
  for (const dir of (process.env.PATH ?? '').split(delimiter)) {
    if (dir && (await isExecutable(join(dir, name)))) return join(dir, name);
  }
  return undefined;
}

export const howToGetTemporal = `The Temporal CLI was not found and Go is not installed to build it.
Either:
  - install Go (>= 1.25) and run: npm run setup:temporal
  - or download the CLI from https://github.com/temporalio/cli/releases/tag/${temporalCliVersion}
    (temporal_cli_${temporalCliVersion.slice(1)}_<os>_<arch>.tar.gz), unpack it, and set TEMPORAL_CLI_PATH=/path/to/temporal
  - or point TEMPORAL_ADDRESS at a running Temporal server.`;

/**
 * Finds the Temporal CLI: `TEMPORAL_CLI_PATH`, then `temporal` on PATH, then the cached build,
 * and as a last resort builds the pinned version with `go install` into the cache (minutes, once).
 */
export async function ensureTemporalCli(opts: { explicitPath?: string; log?: (msg: string) => void } = {}): Promise<string> {
  if (opts.explicitPath) {
    if (await isExecutable(opts.explicitPath)) return opts.explicitPath;
    throw new Error(`TEMPORAL_CLI_PATH=${opts.explicitPath} is not an executable file.`);
  }
  const fromPath = await onPath('temporal');
  if (fromPath) return fromPath;
  const cached = join(cacheDir(), 'temporal');
  if (await isExecutable(cached)) return cached;
  const go = (await onPath('go')) ?? ((await isExecutable('/usr/local/go/bin/go')) ? '/usr/local/go/bin/go' : undefined);
  if (!go) throw new Error(howToGetTemporal);
  opts.log?.(`Building the Temporal CLI ${temporalCliVersion} with Go into ${cacheDir()} (a few minutes, once)...`);
  await mkdir(cacheDir(), { recursive: true });
  try {
    await run(go, ['install', `${temporalCliModule}@${temporalCliVersion}`], {
      env: { ...process.env, GOBIN: cacheDir(), GOFLAGS: '-trimpath' },
      maxBuffer: 64 * 1024 * 1024,
    });
  } catch (err) {
    const e = err as { stderr?: string; message: string };
    throw new Error(`go install ${temporalCliModule}@${temporalCliVersion} failed:\n${e.stderr ?? e.message}\n\n${howToGetTemporal}`);
  }
  return cached;
}
