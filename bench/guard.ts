// What keeps a bench from reporting a number it did not measure: every answer it reads is checked
// (a 429 or a 500 is a failure, never "not yet"), every load it drives is checked for refused and
// failed requests, every setup step it asks for is checked to have happened (the Temporal server
// pinned to the load's core), and every run says which machine it ran on.
import { execFileSync } from 'node:child_process';
import { readdirSync, readFileSync, readlinkSync, realpathSync } from 'node:fs';
import { cpus } from 'node:os';

/** The machine a bench ran on: the CPU model from /proc/cpuinfo, the cores, Node's version. */
export interface Machine {
  cpuModel: string;
  cores: number;
  node: string;
}

/** The CPU model and core count as /proc/cpuinfo lists them (`model name` lines), else as Node does. */
export function machine(cpuinfo: string | null = readOrNull('/proc/cpuinfo')): Machine {
  const models = (cpuinfo ?? '').split('\n').filter((l) => /^model name\s*:/.test(l)).map((l) => l.slice(l.indexOf(':') + 1).trim());
  return {
    cpuModel: models[0] ?? cpus()[0]?.model.trim() ?? 'unknown',
    cores: models.length || cpus().length,
    node: process.version,
  };
}

/** One line for the top of a bench's output. */
export const machineLine = (m: Machine = machine()): string => `machine: ${m.cpuModel}, ${m.cores} cores, Node ${m.node}`;

function readOrNull(path: string): string | null {
  try {
    return readFileSync(path, 'utf8');
  } catch {
    return null;
  }
}

/**
 * Throws unless the answer is a 2xx (or one of `expected`, e.g. 304 to a conditional read),
 * naming the request and the status: a rate limit's 429 or a server's 500 ends the bench.
 */
export function expectOk(what: string, res: { status: number; text?: string }, expected: readonly number[] = []): void {
  if ((res.status >= 200 && res.status < 300) || expected.includes(res.status)) return;
  const body = res.text === undefined ? '' : `: ${res.text.slice(0, 300)}`;
  throw new Error(`${what} answered HTTP ${res.status}${body}`);
}

/** Throws when a load run had any answer of 400 or more, or any failed request. */
export function expectCleanLoad(what: string, load: { non2xx: number; errors: number }): void {
  if (load.non2xx > 0 || load.errors > 0) {
    throw new Error(`${what}: ${load.non2xx} answers of 400 or more (429s included) and ${load.errors} failed requests in a round`);
  }
}

/** The parent pid of `pid` (/proc/<pid>/stat), or null once it is gone. */
function parentOf(pid: string): string | null {
  try {
    const stat = readFileSync(`/proc/${pid}/stat`, 'utf8');
    return stat.slice(stat.lastIndexOf(')') + 2).split(' ')[1] ?? null;
  } catch {
    return null;
  }
}

/** Whether `pid` descends from `ancestor` (its parent, its parent's parent, …). */
function descendsFrom(pid: string, ancestor: string): boolean {
  for (let p = parentOf(pid), hops = 0; p && p !== '0' && hops < 64; p = parentOf(p), hops++) if (p === ancestor) return true;
  return false;
}

/**
 * The pids of processes running the executable at `executable` (the Temporal CLI the run actually
 * used: TEMPORAL_CLI_PATH, `temporal` on PATH, or the cached build), matched by /proc/<pid>/exe,
 * so a CLI anywhere is found and nothing else is; with `under`, only those this process (or
 * `under`) started, so another session's server on the same machine is never touched.
 */
export function pidsOfExecutable(executable: string, under?: number): string[] {
  const target = realpathSync(executable);
  const found: string[] = [];
  for (const pid of readdirSync('/proc')) {
    if (!/^\d+$/.test(pid)) continue;
    try {
      if (readlinkSync(`/proc/${pid}/exe`) === target && (under === undefined || descendsFrom(pid, String(under)))) found.push(pid);
    } catch {
      // Gone meanwhile, or not ours to read.
    }
  }
  return found;
}

/**
 * Pins the processes of `executable` that this process started (`under`) with `pin`, and throws
 * when none runs: a bench that asked
 * for the Temporal server off the serving core must not measure with it anywhere.
 */
export function pinProcessesOf(executable: string, pin: (pids: readonly string[]) => void, under: number = process.pid): string[] {
  const pids = pidsOfExecutable(executable, under);
  if (pids.length === 0) throw new Error(`pinning asked for, but no process started by ${under} runs ${executable}: nothing would be pinned`);
  pin(pids);
  return pids;
}

/** The CPU list a process may run on (taskset's answer), e.g. "1" or "0,1". */
export function affinityOf(pid: string): string {
  return execFileSync('taskset', ['-p', '-c', pid], { encoding: 'utf8' }).trim().split(':').pop()!.trim();
}
