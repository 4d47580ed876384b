// A sampled CPU profile of this process over one measured phase (node:inspector), summarised as
// the functions and the files that spent the most self time, so a bench can say where its time
// went without a separate tool. `--profile` on a bench turns it on; sampling costs a few percent.
import { Session } from 'node:inspector/promises';
import { writeFile } from 'node:fs/promises';

interface ProfileNode {
  id: number;
  callFrame: { functionName: string; url: string; lineNumber: number };
  hitCount?: number;
}
interface Profile {
  nodes: ProfileNode[];
  samples?: number[];
  timeDeltas?: number[];
  startTime: number;
  endTime: number;
}

export interface ProfileSummary {
  sampledMs: number;
  /** Share of samples off the JS thread's work (idle, waiting on I/O). */
  idleShare: number;
  /** The heaviest functions by self time: `name file:line`, share of non-idle samples. */
  functions: Array<{ frame: string; share: number }>;
  /** The same grouped by file (node_modules packages by package name). */
  files: Array<{ file: string; share: number }>;
}

/** Where a frame's file belongs: a package under node_modules by its name, else the path from the repository. */
function fileOf(url: string): string {
  if (!url) return '(native)';
  const nm = url.lastIndexOf('node_modules/');
  if (nm >= 0) {
    const rest = url.slice(nm + 'node_modules/'.length).split('/');
    return rest[0]!.startsWith('@') ? `${rest[0]}/${rest[1]}` : rest[0]!;
  }
  return url.replace(/^file:\/\//, '').replace(`${process.cwd()}/`, '');
}

export function summarise(profile: Profile, top = 15): ProfileSummary {
  const byId = new Map(profile.nodes.map((n) => [n.id, n]));
  const hits = new Map<number, number>();
  for (const s of profile.samples ?? []) hits.set(s, (hits.get(s) ?? 0) + 1);
  let total = 0;
  let idle = 0;
  const fns = new Map<string, number>();
  const files = new Map<string, number>();
  for (const [id, count] of hits) {
    const { functionName, url, lineNumber } = byId.get(id)!.callFrame;
    total += count;
    if (functionName === '(idle)' || functionName === '(program)' || functionName === '(garbage collector)') {
      if (functionName === '(idle)') idle += count;
      if (functionName !== '(garbage collector)') continue;
    }
    const file = fileOf(url);
    const frame = `${functionName || '(anonymous)'} ${file}${url ? `:${lineNumber + 1}` : ''}`;
    fns.set(frame, (fns.get(frame) ?? 0) + count);
    files.set(file, (files.get(file) ?? 0) + count);
  }
  const busy = [...fns.values()].reduce((a, b) => a + b, 0) || 1;
  const topOf = <K extends string>(m: Map<string, number>, key: K) =>
    [...m.entries()].sort((a, b) => b[1] - a[1]).slice(0, top).map(([k, v]) => ({ [key]: k, share: Math.round((v / busy) * 1000) / 1000 }) as Record<K, string> & { share: number });
  return {
    sampledMs: Math.round((profile.endTime - profile.startTime) / 1000),
    idleShare: total ? Math.round((idle / total) * 1000) / 1000 : 0,
    functions: topOf(fns, 'frame'),
    files: topOf(files, 'file'),
  };
}

/** Starts sampling every `intervalUs`; `stop` ends it, writes the raw profile to `saveTo` if given, and summarises it. */
export async function startCpuProfile(intervalUs = 200): Promise<{ stop(saveTo?: string): Promise<ProfileSummary> }> {
  const session = new Session();
  session.connect();
  await session.post('Profiler.enable');
  await session.post('Profiler.setSamplingInterval', { interval: intervalUs });
  await session.post('Profiler.start');
  return {
    async stop(saveTo?: string) {
      const { profile } = (await session.post('Profiler.stop')) as { profile: Profile };
      session.disconnect();
      if (saveTo) await writeFile(saveTo, JSON.stringify(profile));
      return summarise(profile);
    },
  };
}
