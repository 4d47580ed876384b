import { afterAll, describe, expect, it } from '@jest/globals';
import { spawn, type ChildProcess } from 'node:child_process';
import { copyFileSync, mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { expectCleanLoad, expectOk, machine, machineLine, pidsOfExecutable, pinProcessesOf } from '../../bench/guard.js';

/**
 * The checks that keep a bench from reporting what it did not measure (bench/guard.ts): an answer
 * a bench reads that is not a 2xx ends it (a 429 is never "not yet"), a load with refused requests
 * ends it, and a pinning step that finds no process to pin ends it rather than running unpinned.
 */
describe('expectOk', () => {
  it('passes a 2xx, and a status the caller expects (a 304 to a conditional read)', () => {
    expect(() => expectOk('GET /v1/chains', { status: 200 })).not.toThrow();
    expect(() => expectOk('POST /v1/payment-links', { status: 201 })).not.toThrow();
    expect(() => expectOk('GET /v1/invoices/x', { status: 304 }, [304])).not.toThrow();
  });

  it('throws on a 429, naming the request and the status, with the answer', () => {
    expect(() => expectOk('chain: GET /v1/payment-links/pl_1', { status: 429, text: '{"error":{"code":"rate_limited"}}' })).toThrow(
      'chain: GET /v1/payment-links/pl_1 answered HTTP 429: {"error":{"code":"rate_limited"}}',
    );
  });

  it('throws on a 500, a 404 and a 304 nobody expected', () => {
    expect(() => expectOk('POST /v1/wallets/derive', { status: 500 })).toThrow('POST /v1/wallets/derive answered HTTP 500');
    expect(() => expectOk('GET /x', { status: 404 })).toThrow('HTTP 404');
    expect(() => expectOk('GET /x', { status: 304 })).toThrow('HTTP 304');
  });
});

describe('expectCleanLoad', () => {
  it('passes a load whose every answer was below 400, and throws on any refused or failed request', () => {
    expect(() => expectCleanLoad('derive', { non2xx: 0, errors: 0 })).not.toThrow();
    expect(() => expectCleanLoad('derive: POST /v1/wallets/derive', { non2xx: 1, errors: 0 })).toThrow(/derive: POST \/v1\/wallets\/derive: 1 answers of 400 or more \(429s included\)/);
    expect(() => expectCleanLoad('reads', { non2xx: 0, errors: 3 })).toThrow(/3 failed requests/);
  });
});

describe('pinning the processes of an executable', () => {
  // A copy of `sleep` at a path of its own: like a Temporal CLI at TEMPORAL_CLI_PATH, outside the cache.
  const dir = mkdtempSync(join(tmpdir(), 'bench-guard-'));
  const executable = join(dir, 'temporal-elsewhere');
  copyFileSync('/bin/sleep', executable);
  let child: ChildProcess | undefined;
  afterAll(async () => {
    if (child && child.exitCode === null) {
      const exited = new Promise((resolve) => child!.once('exit', resolve));
      child.kill();
      await exited;
    }
    rmSync(dir, { recursive: true, force: true });
  });

  it('throws when nothing runs it, and pins nothing', () => {
    const pinned: string[][] = [];
    expect(() => pinProcessesOf(executable, (pids) => pinned.push([...pids]))).toThrow(`pinning asked for, but no process started by ${process.pid} runs ${executable}`);
    expect(pinned).toEqual([]);
  });

  it('finds the process by the executable it runs, wherever that is, and nothing else', async () => {
    child = spawn(executable, ['30'], { stdio: 'ignore' });
    await new Promise((resolve) => child!.once('spawn', resolve));
    const pinned: string[][] = [];
    expect(pinProcessesOf(executable, (pids) => pinned.push([...pids]))).toEqual([String(child.pid)]);
    expect(pinned).toEqual([[String(child.pid)]]);
    // The real /bin/sleep (another file) is not this executable's process.
    expect(pidsOfExecutable('/bin/sleep')).not.toContain(String(child.pid));
    // Started by this process, not by another one (another session's server is left alone).
    expect(pidsOfExecutable(executable, process.pid)).toEqual([String(child.pid)]);
    expect(pidsOfExecutable(executable, child.pid)).toEqual([]);
    expect(() => pinProcessesOf(executable, () => undefined, child!.pid)).toThrow(/no process started by/);
  });
});

describe('machine', () => {
  it('reads the CPU model and the cores from /proc/cpuinfo', () => {
    const cpuinfo = 'processor\t: 0\nmodel name\t: Intel(R) Xeon(R) Platinum 8375C CPU @ 2.90GHz\n\nprocessor\t: 1\nmodel name\t: Intel(R) Xeon(R) Platinum 8375C CPU @ 2.90GHz\n';
    expect(machine(cpuinfo)).toEqual({ cpuModel: 'Intel(R) Xeon(R) Platinum 8375C CPU @ 2.90GHz', cores: 2, node: process.version });
    expect(machineLine(machine(cpuinfo))).toBe(`machine: Intel(R) Xeon(R) Platinum 8375C CPU @ 2.90GHz, 2 cores, Node ${process.version}`);
  });

  it('names this machine', () => {
    const m = machine();
    expect(m.cpuModel).not.toBe('unknown');
    expect(m.cores).toBeGreaterThan(0);
  });
});
