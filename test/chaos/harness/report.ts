import { mkdir, readdir, readFile, writeFile } from 'node:fs/promises';
import { join } from 'node:path';

/**
 * What one chaos scenario counted. Every field is a count of real things the scenario did or
 * found after recovery; the global teardown adds them up into the summary table.
 */
export interface ChaosCounts {
  /** Faults injected: kill -9s, upstream errors, timeouts, malformed bodies, lag, reorgs. */
  faults: number;
  /** Payments customers made (a deposit mined, an M-Pesa prompt accepted on the phone). */
  payments: number;
  /** Payments that ended confirmed exactly once (one paid link, one paid event). */
  confirmedOnce: number;
  /** Links confirmed twice, or a payment counted twice: must be 0. */
  doubleConfirmed: number;
  /** Webhook events delivered to the merchant's receiver (distinct event ids). */
  eventsDelivered: number;
  /** Events recorded but never delivered, or delivered under two ids: must be 0. */
  eventsLost: number;
  /** Payments made but not confirmed and not otherwise accounted for: must be 0. */
  paymentsLost: number;
  /** Links left in PROCESSING with no path out (no open prompt, no seen deposit, workflow closed): must be 0. */
  stuck: number;
  /** Receiving addresses given to two links: must be 0. */
  duplicateAddresses: number;
  /** Hostile inputs sent. */
  fuzzedInputs: number;
  /** 5xx answers the API gave: must be 0. */
  http5xx: number;
  /** Requests whose answer was 4xx but which changed rows anyway: must be 0. */
  partialWrites: number;
  /** Links in each state at the end. */
  linksByState: Record<string, number>;
  /** Free-form facts worth printing (RSS, durations, which faults). */
  notes: string[];
}

export type ChaosProfile = 'ci' | 'full';

/** `CHAOS_PROFILE=ci` runs the documented subset (shorter runs, fewer cases); anything else the full suite. */
export function chaosProfile(): ChaosProfile {
  return process.env.CHAOS_PROFILE === 'ci' ? 'ci' : 'full';
}

/** Picks the CI value or the full value for a scenario's size. */
export function sized<T>(ci: T, full: T): T {
  return chaosProfile() === 'ci' ? ci : full;
}

export function runDir(): string {
  const dir = process.env.CHAOS_RUN_DIR;
  if (!dir) throw new Error('CHAOS_RUN_DIR is not set: run the chaos suite with `npm run test:chaos`');
  return dir;
}

export function emptyCounts(): ChaosCounts {
  return {
    faults: 0, payments: 0, confirmedOnce: 0, doubleConfirmed: 0, eventsDelivered: 0, eventsLost: 0, paymentsLost: 0,
    stuck: 0, duplicateAddresses: 0, fuzzedInputs: 0, http5xx: 0, partialWrites: 0, linksByState: {}, notes: [],
  };
}

/** Adds `b` into `a` (counts summed, states merged, notes appended). */
export function addCounts(a: ChaosCounts, b: Partial<ChaosCounts>): ChaosCounts {
  const out: ChaosCounts = { ...a, linksByState: { ...a.linksByState }, notes: [...a.notes] };
  for (const [k, v] of Object.entries(b)) {
    if (typeof v === 'number') (out as unknown as Record<string, number>)[k] = ((out as unknown as Record<string, number>)[k] ?? 0) + v;
  }
  for (const [state, n] of Object.entries(b.linksByState ?? {})) out.linksByState[state] = (out.linksByState[state] ?? 0) + n;
  out.notes.push(...(b.notes ?? []));
  return out;
}

/** Records a scenario's counts for the summary (one file per scenario; a second call adds to it). */
export async function writeReport(scenario: string, counts: Partial<ChaosCounts>): Promise<void> {
  const dir = join(runDir(), 'reports');
  await mkdir(dir, { recursive: true });
  const file = join(dir, `${safeName(scenario)}.json`);
  const previous = await readFile(file, 'utf8').then((t) => JSON.parse(t) as ChaosCounts).catch(() => emptyCounts());
  const merged = addCounts(previous, counts);
  await writeFile(file, JSON.stringify({ scenario, ...merged }, null, 2));
  console.log(`[chaos] ${scenario}: ${JSON.stringify(counts)}`);
}

export async function readReports(dir = runDir()): Promise<Array<ChaosCounts & { scenario: string }>> {
  const reportsDir = join(dir, 'reports');
  const files = await readdir(reportsDir).catch(() => [] as string[]);
  const out: Array<ChaosCounts & { scenario: string }> = [];
  for (const f of files.sort()) out.push(JSON.parse(await readFile(join(reportsDir, f), 'utf8')));
  return out;
}

/**
 * Every secret a scenario created (API keys, M-Pesa consumer key/secret and passkey, webhook
 * secrets, callback tokens, the encryption key). The teardown looks for each one in every log,
 * history and database dump the run produced.
 */
export async function registerSecrets(scenario: string, secrets: Array<{ kind: string; value: string }>): Promise<void> {
  const dir = join(runDir(), 'secrets');
  await mkdir(dir, { recursive: true });
  const file = join(dir, `${safeName(scenario)}.json`);
  const previous = await readFile(file, 'utf8').then((t) => JSON.parse(t) as Array<{ kind: string; value: string }>).catch(() => []);
  await writeFile(file, JSON.stringify([...previous, ...secrets.filter((s) => s.value.length >= 8)]));
}

/**
 * The folder where a scenario leaves what the secret scan reads: process logs (`*.log`),
 * workflow histories (`histories/*.json`, payloads decoded) and database dumps (`*.sql`).
 */
export async function artifactDir(scenario: string): Promise<string> {
  const dir = join(runDir(), 'artifacts', safeName(scenario));
  await mkdir(dir, { recursive: true });
  return dir;
}

function safeName(s: string): string {
  return s.replace(/[^a-zA-Z0-9_.-]+/g, '-');
}
