import { afterAll, beforeAll, describe, expect, it } from '@jest/globals';
import { execFile } from 'node:child_process';
import { createHash } from 'node:crypto';
import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { chmod, mkdir, mkdtemp, readdir, readFile, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { promisify } from 'node:util';
import {
  downloadTemporalCli,
  ensureTemporalCli,
  goBuildEnv,
  goInstall,
  malipoCacheRoot,
  maxArchiveBytes,
  temporalCliArchiveName,
  TemporalCliChecksumError,
  type TemporalCliBuilder,
} from '../../runtime/temporal-cli.js';

const run = promisify(execFile);
const archive = temporalCliArchiveName()!;

/**
 * The first-run download of the pinned Temporal CLI against a local HTTP server laid out like the
 * GitHub release (the archive and checksums.txt under one base URL): a real .tar.gz holding a
 * small `temporal` executable, built here with tar.
 */
describe('the Temporal CLI download', () => {
  let work: string;
  let server: Server;
  let base: string;
  let archiveBytes: Buffer;
  let rightSum: string;
  const requests: string[] = [];
  /** What /good, /wrong, /missing and /redirect serve as checksums.txt. */
  const checksums: Record<string, () => string> = {};

  beforeAll(async () => {
    work = await mkdtemp(join(tmpdir(), 'malipo-cli-download-'));
    const src = join(work, 'src');
    await mkdir(src);
    await writeFile(join(src, 'temporal'), '#!/bin/sh\necho "temporal version 1.5.1 (fake for the download test)"\n');
    await chmod(join(src, 'temporal'), 0o755);
    await writeFile(join(src, 'LICENSE'), 'MIT\n');
    await run('tar', ['-czf', join(work, archive), '-C', src, 'LICENSE', 'temporal']);
    archiveBytes = await readFile(join(work, archive));
    rightSum = createHash('sha256').update(archiveBytes).digest('hex');
    const other = createHash('sha256').update('something else').digest('hex');
    checksums.good = () => `${other}  temporal_cli_1.5.1_windows_amd64.zip\n${rightSum}  ${archive}\n`;
    checksums.wrong = () => `${other}  ${archive}\n`;
    checksums.missing = () => `${other}  temporal_cli_1.5.1_windows_amd64.zip\n`;
    checksums.redirect = checksums.good;
    checksums.huge = checksums.good;
    checksums.endless = checksums.good;

    server = createServer((req, res) => {
      requests.push(req.url ?? '');
      const [, release, file] = (req.url ?? '').split('/');
      if (release === 'huge' && file === archive) {
        // Announces far more than any CLI archive weighs, then sends a little.
        res.writeHead(200, { 'content-type': 'application/gzip', 'content-length': String(maxArchiveBytes + 1) });
        res.write(archiveBytes.subarray(0, 10));
        setTimeout(() => res.destroy(), 2_000).unref();
      } else if (release === 'endless' && file === archive) {
        // No length announced: keeps sending until the client gives up.
        res.writeHead(200, { 'content-type': 'application/gzip' });
        const chunk = Buffer.alloc(64 * 1024, 1);
        const send = () => { while (res.write(chunk)) { /* until the socket pushes back */ } };
        res.on('drain', send);
        res.on('close', () => res.off('drain', send));
        send();
      } else if (release === 'redirect' && file === archive) {
        res.writeHead(302, { location: `/assets/${archive}` }).end();
      } else if (file === 'checksums.txt' && release && checksums[release]) {
        res.writeHead(200, { 'content-type': 'text/plain' }).end(checksums[release]!());
      } else if (file === archive && release !== 'missing') {
        res.writeHead(200, { 'content-type': 'application/gzip', 'content-length': archiveBytes.length }).end(archiveBytes);
      } else {
        res.writeHead(404).end();
      }
    });
    await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
    base = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
  });

  afterAll(async () => {
    await new Promise((resolve) => server.close(resolve));
    await rm(work, { recursive: true, force: true });
  });

  /** A fresh cache root per case; `dir` is where the CLI goes, as ~/.cache/malipo/temporal-v1.5.1. */
  const freshCache = async (name: string) => {
    const root = join(work, name);
    await mkdir(root);
    return { root, dir: join(root, 'temporal-v1.5.1') };
  };
  const builder = () => {
    const calls: string[] = [];
    const build: TemporalCliBuilder = async ({ dir }) => {
      calls.push(dir);
      await mkdir(dir, { recursive: true });
      await writeFile(join(dir, 'temporal'), '#!/bin/sh\necho "temporal version 1.5.1 (built)"\n', { mode: 0o755 });
    };
    return { calls, build };
  };

  it('installs the archive whose SHA-256 is the published one, and the installed binary runs', async () => {
    const { root, dir } = await freshCache('good');
    const { calls, build } = builder();
    const lines: string[] = [];
    const path = await ensureTemporalCli({ downloadBase: `${base}/good`, dir, searchPath: false, build, log: (m) => lines.push(m) });

    expect(path).toBe(join(dir, 'temporal'));
    expect((await run(path, ['--version'])).stdout).toContain('temporal version 1.5.1 (fake for the download test)');
    expect(calls).toEqual([]);
    // Only the binary: no archive, no staging folder, no LICENSE left behind.
    expect(await readdir(root)).toEqual(['temporal-v1.5.1']);
    expect(await readdir(dir)).toEqual(['temporal']);
    const said = lines.join('\n');
    expect(said).toContain(`Downloading ${archive}`);
    expect(said).toContain(`SHA-256 matches checksums.txt (${rightSum})`);
    expect(said).toContain(`${archive}: ${(archiveBytes.length / 1e6).toFixed(1)} MB (seconds to a minute)`);
    expect(said).toMatch(/Installed temporal version 1\.5\.1/);

    // Later runs use the cached copy without asking the server anything.
    const before = requests.length;
    await expect(ensureTemporalCli({ downloadBase: `${base}/good`, dir, searchPath: false, build })).resolves.toBe(path);
    expect(requests.length).toBe(before);
  });

  it('follows a redirect to the archive (GitHub answers release downloads with one)', async () => {
    const { dir } = await freshCache('redirect');
    const { calls, build } = builder();
    const path = await ensureTemporalCli({ downloadBase: `${base}/redirect/`, dir, searchPath: false, build });
    expect((await run(path, ['--version'])).stdout).toContain('fake for the download test');
    expect(calls).toEqual([]);
    expect(requests).toContain(`/assets/${archive}`);
  });

  it('refuses an archive whose SHA-256 is not the published one: a clear error, nothing installed, nothing built', async () => {
    const { root, dir } = await freshCache('wrong');
    const { calls, build } = builder();
    const attempt = ensureTemporalCli({ downloadBase: `${base}/wrong`, dir, searchPath: false, build });
    await expect(attempt).rejects.toBeInstanceOf(TemporalCliChecksumError);
    await expect(attempt).rejects.toThrow(`its SHA-256 is ${rightSum}, but checksums.txt publishes ${createHash('sha256').update('something else').digest('hex')}. Nothing was installed.`);
    expect(calls).toEqual([]);
    expect(await readdir(root)).toEqual([]);
  });

  it('refuses an archive that announces more than a CLI archive can weigh, before downloading it, and builds instead', async () => {
    const { root, dir } = await freshCache('huge');
    const { calls, build } = builder();
    const lines: string[] = [];
    await ensureTemporalCli({ downloadBase: `${base}/huge`, dir, searchPath: false, build, log: (m) => lines.push(m) });
    expect(calls).toEqual([dir]);
    expect(lines.join('\n')).toContain(`announces ${((maxArchiveBytes + 1) / 1e6).toFixed(1)} MB, more than the 200.0 MB a CLI archive can be: refused`);
    expect(await readdir(root)).toEqual(['temporal-v1.5.1']);
  });

  it('stops reading an archive of no announced size once it passes the cap, and leaves nothing behind', async () => {
    const { root, dir } = await freshCache('endless');
    await expect(downloadTemporalCli({ base: `${base}/endless`, archive, dir, log: () => {}, maxBytes: 1_000_000 }))
      .rejects.toThrow(`sent more than 1.0 MB, more than a CLI archive can be: refused, nothing installed.`);
    expect(await readdir(root)).toEqual([]);
  });

  it('gets the CLI once when several processes ask at the same time, and takes over a lock its dead owner left', async () => {
    const { root, dir } = await freshCache('concurrent');
    let builds = 0;
    const slowBuild: TemporalCliBuilder = async ({ dir: into }) => {
      builds++;
      await new Promise((resolve) => setTimeout(resolve, 300));
      await mkdir(into, { recursive: true });
      await writeFile(join(into, 'temporal'), '#!/bin/sh\necho built\n', { mode: 0o755 });
    };
    const paths = await Promise.all([1, 2, 3].map(() => ensureTemporalCli({ downloadBase: 'off', dir, searchPath: false, build: slowBuild })));
    expect(paths).toEqual([join(dir, 'temporal'), join(dir, 'temporal'), join(dir, 'temporal')]);
    expect(builds).toBe(1);
    expect(await readdir(root)).toEqual(['temporal-v1.5.1']);

    // A build killed half-way leaves its lock behind; its pid no longer runs, so the next run goes on.
    const { root: root2, dir: dir2 } = await freshCache('stale-lock');
    const dead = (await run(process.execPath, ['-e', 'process.stdout.write(String(process.pid))'])).stdout;
    await mkdir(join(root2, '.temporal-cli.lock'));
    await writeFile(join(root2, '.temporal-cli.lock', 'pid'), dead);
    const { calls, build } = builder();
    await expect(ensureTemporalCli({ downloadBase: 'off', dir: dir2, searchPath: false, build })).resolves.toBe(join(dir2, 'temporal'));
    expect(calls).toEqual([dir2]);
    expect(await readdir(root2)).toEqual(['temporal-v1.5.1']);
  });

  it('falls through to the builder when the server is unreachable, and says why', async () => {
    const { root, dir } = await freshCache('unreachable');
    const closed = createServer();
    await new Promise<void>((resolve) => closed.listen(0, '127.0.0.1', resolve));
    const port = (closed.address() as AddressInfo).port;
    await new Promise((resolve) => closed.close(resolve));
    const { calls, build } = builder();
    const lines: string[] = [];

    const path = await ensureTemporalCli({ downloadBase: `http://127.0.0.1:${port}/v1.5.1`, dir, searchPath: false, build, log: (m) => lines.push(m) });

    expect(calls).toEqual([dir]);
    expect((await run(path, ['--version'])).stdout).toContain('(built)');
    expect(lines.join('\n')).toMatch(/Could not download the Temporal CLI \(.*ECONNREFUSED\); building it from source instead\./);
    expect(await readdir(root)).toEqual(['temporal-v1.5.1']);
  });

  it('falls through to the builder when checksums.txt lists no checksum for this platform, without installing the archive', async () => {
    const { dir } = await freshCache('missing');
    const { calls, build } = builder();
    const lines: string[] = [];
    const path = await ensureTemporalCli({ downloadBase: `${base}/missing`, dir, searchPath: false, build, log: (m) => lines.push(m) });
    expect(calls).toEqual([dir]);
    expect((await run(path, ['--version'])).stdout).toContain('(built)');
    expect(lines.join('\n')).toContain(`checksums.txt lists no checksum for ${archive}`);
  });

  it('builds straight away with TEMPORAL_CLI_DOWNLOAD_BASE=off, and reports a builder failure with both reasons', async () => {
    const { dir } = await freshCache('off');
    const { calls, build } = builder();
    await ensureTemporalCli({ downloadBase: 'off', dir, searchPath: false, build });
    expect(calls).toEqual([dir]);

    const { root, dir: dir2 } = await freshCache('off-failing');
    const failing: TemporalCliBuilder = async () => {
      throw new Error('Go is not installed');
    };
    await expect(ensureTemporalCli({ downloadBase: 'off', dir: dir2, searchPath: false, build: failing }))
      .rejects.toThrow('The Temporal CLI could not be downloaded (TEMPORAL_CLI_DOWNLOAD_BASE=off) nor built:\nGo is not installed');
    expect(await readdir(root)).toEqual([]);
  });

  it('go install reports modules downloaded and packages compiled, and its last lines when it fails', async () => {
    // A stand-in for `go` that prints what `go install -v` prints (a real build takes minutes).
    const fakeGo = join(work, 'go');
    await writeFile(fakeGo, [
      '#!/bin/sh',
      `echo "$*" > "${join(work, 'go-args')}"`,
      `echo "$GOBIN $GOMODCACHE $GOCACHE" >> "${join(work, 'go-args')}"`,
      'echo "go: downloading go.temporal.io/server v1.29.1" >&2',
      'echo "go: downloading github.com/spf13/cobra v1.9.1" >&2',
      'echo "internal/abi" >&2',
      'echo "github.com/spf13/cobra" >&2',
      'echo "go.temporal.io/server/common/log" >&2',
      '[ -n "$FAKE_GO_FAIL" ] && { echo "go: go.temporal.io/server@v1.29.1: verifying module: checksum mismatch" >&2; exit 1; }',
      'exit 0',
      '',
    ].join('\n'), { mode: 0o755 });
    const lines: string[] = [];
    await goInstall(fakeGo, ['github.com/temporalio/cli/cmd/temporal@v1.5.1'], '/the/bin', (m) => lines.push(m));
    const [args, env] = (await readFile(join(work, 'go-args'), 'utf8')).trim().split('\n');
    expect(args).toBe('install -v -ldflags=-s -w github.com/temporalio/cli/cmd/temporal@v1.5.1');
    expect(env).toBe(`/the/bin ${goBuildEnv('/the/bin').GOMODCACHE} ${goBuildEnv('/the/bin').GOCACHE}`);
    expect(lines.at(-1)).toMatch(/^  built in \d+ s \(2 modules downloaded, 3 packages compiled\)\.$/);

    process.env.FAKE_GO_FAIL = '1';
    try {
      await expect(goInstall(fakeGo, ['x@v1'], '/the/bin', () => {})).rejects.toThrow(/exited with 1:\n[^]*verifying module: checksum mismatch/);
    } finally {
      delete process.env.FAKE_GO_FAIL;
    }
  });

  it("keeps Go's module and build caches under ~/.cache/malipo/go unless GOMODCACHE / GOCACHE are set", () => {
    const saved = { GOMODCACHE: process.env.GOMODCACHE, GOCACHE: process.env.GOCACHE };
    try {
      delete process.env.GOMODCACHE;
      delete process.env.GOCACHE;
      const env = goBuildEnv('/somewhere/bin');
      expect(env.GOBIN).toBe('/somewhere/bin');
      expect(env.GOMODCACHE).toBe(join(malipoCacheRoot(), 'go', 'mod'));
      expect(env.GOCACHE).toBe(join(malipoCacheRoot(), 'go', 'build'));
      expect(env.GOMODCACHE!.startsWith(process.cwd())).toBe(false);
      process.env.GOMODCACHE = '/mine/mod';
      process.env.GOCACHE = '/mine/build';
      expect(goBuildEnv('/b')).toMatchObject({ GOMODCACHE: '/mine/mod', GOCACHE: '/mine/build' });
    } finally {
      for (const [k, v] of Object.entries(saved)) {
        if (v === undefined) delete process.env[k];
        else process.env[k] = v;
      }
    }
  });
});
