import { execFile, spawn } from 'node:child_process';
import { createHash } from 'node:crypto';
import { createWriteStream } from 'node:fs';
import { access, chmod, constants, mkdir, mkdtemp, readdir, rename, rm, stat } from 'node:fs/promises';
import { homedir } from 'node:os';
import { delimiter, dirname, join } from 'node:path';
import { Readable, Transform } from 'node:stream';
import { pipeline } from 'node:stream/promises';
import type { ReadableStream as WebReadableStream } from 'node:stream/web';
import { promisify } from 'node:util';
import { withInstallLock } from './install-lock.js';

const run = promisify(execFile);

/**
 * The pinned Temporal CLI. v1.5.1 is the newest tag `go install` accepts: later tags carry a
 * `replace` directive in go.mod. It embeds Temporal server 1.29.1 and the Web UI.
 */
export const temporalCliVersion = 'v1.5.1';
export const temporalCliModule = 'github.com/temporalio/cli/cmd/temporal';

/**
 * Where the official release archives and their `checksums.txt` (SHA-256, written by the CLI's
 * release build) live: the pinned version's GitHub release. TEMPORAL_CLI_DOWNLOAD_BASE replaces it
 * (a mirror holding the same two files, or `off` to never download).
 */
export const defaultTemporalCliDownloadBase = `https://github.com/temporalio/cli/releases/download/${temporalCliVersion}`;

/** ~/.cache/malipo (or $XDG_CACHE_HOME/malipo): everything Malipo fetches or builds once. */
export function malipoCacheRoot(): string {
  return join(process.env.XDG_CACHE_HOME ?? join(homedir(), '.cache'), 'malipo');
}

export function cacheDir(): string {
  return join(malipoCacheRoot(), `temporal-${temporalCliVersion}`);
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

export const howToGetTemporal = `The Temporal CLI was not found, could not be downloaded, and Go is not installed to build it.
Either:
  - download the CLI from https://github.com/temporalio/cli/releases/tag/${temporalCliVersion}
    (temporal_cli_${temporalCliVersion.slice(1)}_<os>_<arch>.tar.gz), unpack it, and set TEMPORAL_CLI_PATH=/path/to/temporal
  - or set TEMPORAL_CLI_DOWNLOAD_BASE to a mirror holding that archive and checksums.txt
  - or install Go (>= 1.25) and run: npm run setup:temporal
  - or point TEMPORAL_ADDRESS at a running Temporal server.`;

/** The release archive's name for this machine, or undefined where the CLI publishes none we use. */
export function temporalCliArchiveName(platform: NodeJS.Platform = process.platform, arch: string = process.arch): string | undefined {
  const os = platform === 'linux' || platform === 'darwin' ? platform : undefined;
  const cpu = arch === 'x64' ? 'amd64' : arch === 'arm64' ? 'arm64' : undefined;
  return os && cpu ? `temporal_cli_${temporalCliVersion.slice(1)}_${os}_${cpu}.tar.gz` : undefined;
}

/** Builds the CLI from source into `dir` (the default: `go install`); tests hand in their own. */
export type TemporalCliBuilder = (target: { dir: string; log: (msg: string) => void }) => Promise<void>;

export interface TemporalCliOptions {
  /** TEMPORAL_CLI_PATH: used as is, never downloaded over. */
  explicitPath?: string;
  log?: (msg: string) => void;
  /** TEMPORAL_CLI_DOWNLOAD_BASE: the release files' base URL; `off` (or empty) skips the download. */
  downloadBase?: string;
  /** Where the CLI is kept (default: cacheDir()). */
  dir?: string;
  /** Look for `temporal` on PATH (default true). */
  searchPath?: boolean;
  /** The last way, when the download fails (default: buildWithGo). */
  build?: TemporalCliBuilder;
}

/** The published archive did not match its published checksum: refused, nothing installed. */
export class TemporalCliChecksumError extends Error {}

/**
 * Finds the Temporal CLI: `TEMPORAL_CLI_PATH`, then `temporal` on PATH, then the cached copy. The
 * first time, it downloads the pinned release archive for this platform, checks its SHA-256
 * against the release's checksums.txt and installs it into the cache (seconds); when that cannot
 * be done (no network, no archive for the platform) it builds the pinned version from source with
 * Go (minutes, once). A checksum mismatch is refused outright: nothing is installed or built.
 */
export async function ensureTemporalCli(opts: TemporalCliOptions = {}): Promise<string> {
  if (opts.explicitPath) {
    if (await isExecutable(opts.explicitPath)) return opts.explicitPath;
    throw new Error(`TEMPORAL_CLI_PATH=${opts.explicitPath} is not an executable file.`);
  }
  if (opts.searchPath !== false) {
    const fromPath = await onPath('temporal');
    if (fromPath) return fromPath;
  }
  const dir = opts.dir ?? cacheDir();
  const cached = join(dir, 'temporal');
  if (await isExecutable(cached)) return cached;

  const log = opts.log ?? (() => {});
  return withInstallLock(join(dirname(dir), '.temporal-cli.lock'), 'the Temporal CLI', async () => {
    if (await isExecutable(cached)) return cached;
    return getTemporalCli(opts, dir, cached, log);
  }, { log });
}

async function getTemporalCli(opts: TemporalCliOptions, dir: string, cached: string, log: (msg: string) => void): Promise<string> {
  log(`The Temporal CLI ${temporalCliVersion} is not installed yet: getting it once into ${dir} (later runs start in seconds).`);
  const base = opts.downloadBase ?? defaultTemporalCliDownloadBase;
  const archive = temporalCliArchiveName();
  let whyNotDownloaded: string;
  if (base === '' || base === 'off') whyNotDownloaded = 'TEMPORAL_CLI_DOWNLOAD_BASE=off';
  else if (!archive) whyNotDownloaded = `no release archive is used for ${process.platform}/${process.arch} (linux and macOS on x64 or arm64 only)`;
  else {
    try {
      await downloadTemporalCli({ base, archive, dir, log });
      return cached;
    } catch (err) {
      if (err instanceof TemporalCliChecksumError) throw err;
      whyNotDownloaded = (err as Error).message;
    }
  }
  log(`Could not download the Temporal CLI (${whyNotDownloaded}); building it from source instead.`);
  const build = opts.build ?? buildWithGo;
  try {
    await build({ dir, log });
  } catch (err) {
    throw new Error(`The Temporal CLI could not be downloaded (${whyNotDownloaded}) nor built:\n${(err as Error).message}`);
  }
  if (!(await isExecutable(cached))) throw new Error(`Building the Temporal CLI left no executable at ${cached}.\n\n${howToGetTemporal}`);
  log(`The Temporal CLI ${temporalCliVersion} is ready: ${cached}`);
  return cached;
}

const mb = (bytes: number) => `${(bytes / 1e6).toFixed(1)} MB`;

/**
 * The most a CLI release archive may weigh (v1.5.1's are about 25-30 MB): a mirror or a redirect
 * that sends more is refused before the checksum is even computed, so the disk never fills.
 */
export const maxArchiveBytes = 200_000_000;

/** Fails when nothing arrives for this long (a stalled connection), and for the first answer. */
const stallMs = 30_000;

async function fetchOk(url: string, controller: AbortController): Promise<Response> {
  const timer = setTimeout(() => controller.abort(new Error(`no answer from ${url} within ${stallMs / 1000} s`)), stallMs);
  try {
    const res = await fetch(url, { signal: controller.signal, redirect: 'follow' });
    if (!res.ok || !res.body) throw new Error(`${url} answered HTTP ${res.status}`);
    return res;
  } catch (err) {
    const cause = (err as { cause?: { code?: string; message?: string } }).cause;
    if (controller.signal.aborted && controller.signal.reason instanceof Error) throw controller.signal.reason;
    const code = cause?.code ?? '';
    if (code === 'ENOTFOUND' || code === 'EAI_AGAIN') throw new Error(`cannot resolve ${new URL(url).host}: no network or no DNS here`);
    if (code) throw new Error(`${url}: ${code}`);
    throw new Error(cause?.message ? `${url}: ${cause.message}` : (err as Error).message);
  } finally {
    clearTimeout(timer);
  }
}

/** `checksums.txt` lines are `<sha256>  <file name>` (sha256sum's format). */
export function checksumFor(checksums: string, file: string): string | undefined {
  for (const line of checksums.split('\n')) {
    const m = /^([0-9a-fA-F]{64})\s+\*?(\S+)\s*$/.exec(line.trim());
    if (m && m[2] === file) return m[1]!.toLowerCase();
  }
  return undefined;
}

/**
 * Downloads `<base>/<archive>` and `<base>/checksums.txt` into a staging folder next to `dir`,
 * refuses the archive unless its SHA-256 is the published one, unpacks `temporal`, checks that it
 * runs, and only then moves it into `dir`. The staging folder is always removed, so a failure at
 * any step leaves nothing in the cache.
 */
export async function downloadTemporalCli(o: { base: string; archive: string; dir: string; log: (msg: string) => void; maxBytes?: number }): Promise<void> {
  const maxBytes = o.maxBytes ?? maxArchiveBytes;
  const base = o.base.replace(/\/+$/, '');
  const root = dirname(o.dir);
  await mkdir(root, { recursive: true });
  await removeStaleStaging(root);
  const stage = await mkdtemp(join(root, '.temporal-download-'));
  try {
    o.log(`Downloading ${o.archive} and its checksum from ${base} ...`);
    const sumsRes = await fetchOk(`${base}/checksums.txt`, new AbortController());
    const expected = checksumFor(await sumsRes.text(), o.archive);
    if (!expected) throw new Error(`${base}/checksums.txt lists no checksum for ${o.archive}`);

    const controller = new AbortController();
    const res = await fetchOk(`${base}/${o.archive}`, controller);
    const total = Number(res.headers.get('content-length')) || undefined;
    if (total !== undefined && total > maxBytes) {
      throw new Error(`${base}/${o.archive} announces ${mb(total)}, more than the ${mb(maxBytes)} a CLI archive can be: refused, nothing downloaded.`);
    }
    o.log(`  ${o.archive}: ${total ? mb(total) : 'size unknown'} (seconds to a minute); only the unpacked binary is kept.`);
    const hash = createHash('sha256');
    const started = Date.now();
    let received = 0;
    let lastReport = started;
    let stall = setTimeout(() => controller.abort(new Error(`the download stalled (nothing for ${stallMs / 1000} s)`)), stallMs);
    const meter = new Transform({
      transform(chunk: Buffer, _enc, done) {
        hash.update(chunk);
        received += chunk.length;
        if (received > maxBytes) {
          controller.abort(new Error(`${base}/${o.archive} sent more than ${mb(maxBytes)}, more than a CLI archive can be: refused, nothing installed.`));
          done();
          return;
        }
        clearTimeout(stall);
        stall = setTimeout(() => controller.abort(new Error(`the download stalled (nothing for ${stallMs / 1000} s)`)), stallMs);
        const now = Date.now();
        if (now - lastReport >= 2000) {
          lastReport = now;
          o.log(`  ${mb(received)}${total ? ` of ${mb(total)} (${Math.floor((received / total) * 100)}%)` : ''}, ${Math.round((now - started) / 1000)} s`);
        }
        done(null, chunk);
      },
    });
    const archivePath = join(stage, o.archive);
    try {
      await pipeline(Readable.fromWeb(res.body as WebReadableStream<Uint8Array>), meter, createWriteStream(archivePath, { flags: 'wx' }));
    } catch (err) {
      if (controller.signal.aborted && controller.signal.reason instanceof Error) throw controller.signal.reason;
      throw new Error(`the download of ${o.archive} failed: ${(err as Error).message}`);
    } finally {
      clearTimeout(stall);
    }
    const actual = hash.digest('hex');
    if (actual !== expected) {
      throw new TemporalCliChecksumError(
        `Refused ${base}/${o.archive}: its SHA-256 is ${actual}, but checksums.txt publishes ${expected}. ` +
          `Nothing was installed. The download was corrupted or the files were tampered with; try again, ` +
          `or check TEMPORAL_CLI_DOWNLOAD_BASE (set it to "off" to build from source with Go instead).`,
      );
    }
    o.log(`  ${mb(received)} in ${((Date.now() - started) / 1000).toFixed(1)} s; SHA-256 matches checksums.txt (${actual}).`);

    const unpacked = join(stage, 'unpacked');
    await mkdir(unpacked);
    try {
      await run('tar', ['-xzf', archivePath, '-C', unpacked, 'temporal'], { timeout: 120_000 });
    } catch (err) {
      throw new Error(`unpacking ${o.archive} failed: ${((err as { stderr?: string }).stderr || (err as Error).message).trim()}`);
    }
    const binary = join(unpacked, 'temporal');
    await chmod(binary, 0o755);
    let version: string;
    try {
      version = (await run(binary, ['--version'], { timeout: 30_000 })).stdout.trim();
    } catch (err) {
      throw new Error(`the downloaded CLI does not run here: ${(err as Error).message}`);
    }
    await mkdir(o.dir, { recursive: true });
    await rename(binary, join(o.dir, 'temporal'));
    o.log(`Installed ${version || 'the Temporal CLI'} (${mb((await stat(join(o.dir, 'temporal'))).size)}) at ${join(o.dir, 'temporal')}.`);
  } finally {
    await rm(stage, { recursive: true, force: true });
  }
}

/** Staging folders a killed download left behind (older than an hour). */
async function removeStaleStaging(root: string): Promise<void> {
  for (const name of await readdir(root).catch(() => [] as string[])) {
    if (!name.startsWith('.temporal-download-')) continue;
    const path = join(root, name);
    const s = await stat(path).catch(() => undefined);
    if (s && Date.now() - s.mtimeMs > 3_600_000) await rm(path, { recursive: true, force: true });
  }
}

/**
 * Go's environment for the one-time builds: its module and build caches under ~/.cache/malipo/go
 * (unless GOMODCACHE / GOCACHE are set), never in the project folder, and easy to reclaim.
 */
export function goBuildEnv(gobin: string): NodeJS.ProcessEnv {
  const goRoot = join(malipoCacheRoot(), 'go');
  return {
    ...process.env,
    GOBIN: gobin,
    GOMODCACHE: process.env.GOMODCACHE || join(goRoot, 'mod'),
    GOCACHE: process.env.GOCACHE || join(goRoot, 'build'),
    GOFLAGS: '-trimpath',
  };
}

export async function findGo(): Promise<string | undefined> {
  return (await onPath('go')) ?? ((await isExecutable('/usr/local/go/bin/go')) ? '/usr/local/go/bin/go' : undefined);
}

/**
 * Runs `go install -v <packages>` with goBuildEnv, printing every 15 s how long it has run and how
 * many modules it has downloaded and packages it has compiled. Rejects with the last lines of Go's
 * output.
 */
export async function goInstall(go: string, args: string[], gobin: string, log: (msg: string) => void): Promise<void> {
  const started = Date.now();
  let modules = 0;
  let packages = 0;
  const tail: string[] = [];
  const child = spawn(go, ['install', '-v', '-ldflags=-s -w', ...args], { env: goBuildEnv(gobin), stdio: ['ignore', 'ignore', 'pipe'] });
  let pending = '';
  child.stderr.setEncoding('utf8').on('data', (text: string) => {
    const lines = (pending + text).split('\n');
    pending = lines.pop() ?? '';
    for (const line of lines) {
      if (line.startsWith('go: downloading ')) modules++;
      else if (/^[\w.-]+(\/[\w.@~+-]+)*$/.test(line.trim())) packages++;
      tail.push(line);
      if (tail.length > 40) tail.shift();
    }
  });
  const beat = setInterval(() => log(`  ... ${Math.round((Date.now() - started) / 1000)} s: ${modules} modules downloaded, ${packages} packages compiled`), 15_000);
  try {
    const code = await new Promise<number | null>((resolve, reject) => {
      child.on('error', reject);
      child.on('close', resolve);
    });
    if (code !== 0) throw new Error(`go install ${args.join(' ')} exited with ${code}:\n${[...tail, pending].join('\n').trim()}`);
  } finally {
    clearInterval(beat);
  }
  log(`  built in ${Math.round((Date.now() - started) / 1000)} s (${modules} modules downloaded, ${packages} packages compiled).`);
}

/** The default builder: `go install` of the pinned module into `dir`, caches under ~/.cache/malipo/go. */
export const buildWithGo: TemporalCliBuilder = async ({ dir, log }) => {
  const go = await findGo();
  if (!go) throw new Error(howToGetTemporal);
  const env = goBuildEnv(dir);
  log(
    `Building the Temporal CLI ${temporalCliVersion} with Go (${go}) into ${dir}. Only the first run does this.\n` +
      `  Expect about 3 minutes on a fast machine with a good connection, 10 or more on 2 cores or a slow one,\n` +
      `  and about 3.5 GB of disk: ~1.8 GB of Go modules in ${env.GOMODCACHE}, ~1.4 GB of build cache in ${env.GOCACHE},\n` +
      `  and the binary. Both caches can be deleted afterwards (go clean -modcache -cache with the same GOMODCACHE/GOCACHE).`,
  );
  await mkdir(dir, { recursive: true });
  await goInstall(go, [`${temporalCliModule}@${temporalCliVersion}`], dir, log);
};
