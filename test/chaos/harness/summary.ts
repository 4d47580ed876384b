import { writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { addCounts, emptyCounts, readReports, type ChaosCounts } from './report.js';
import { scanForSecrets } from './secret-scan.js';

const columns: Array<[keyof ChaosCounts, string]> = [
  ['faults', 'faults'],
  ['payments', 'payments'],
  ['confirmedOnce', 'confirmed once'],
  ['doubleConfirmed', 'double'],
  ['paymentsLost', 'lost'],
  ['eventsDelivered', 'events'],
  ['eventsLost', 'events lost'],
  ['stuck', 'stuck'],
  ['duplicateAddresses', 'dup. addresses'],
  ['fuzzedInputs', 'fuzzed inputs'],
  ['http5xx', '5xx'],
  ['partialWrites', 'partial writes'],
];

/**
 * The run's one table: each scenario's counts and the total, plus the secret scan over every
 * log, history and dump. Written to runDir/summary.md and printed. Returns the failures
 * (a count that must be zero and is not, a secret found), empty when the run held its promises.
 */
export async function summarize(runDir: string, profile: string): Promise<{ text: string; failures: string[] }> {
  const reports = await readReports(runDir);
  const scan = await scanForSecrets(runDir);
  const total = reports.reduce((acc, r) => addCounts(acc, { ...r, notes: [] }), emptyCounts());
  const head = `| scenario | ${columns.map(([, h]) => h).join(' | ')} |`;
  const rule = `|---|${columns.map(() => '---:').join('|')}|`;
  const row = (name: string, c: ChaosCounts) => `| ${name} | ${columns.map(([k]) => String(c[k] as number)).join(' | ')} |`;
  const lines = [
    `Chaos run ${new Date().toISOString().slice(0, 10)} (profile ${profile})`,
    '',
    head,
    rule,
    ...reports.map((r) => row(r.scenario, r)),
    row('**total**', total),
    '',
    `Links by state at the end: ${Object.entries(total.linksByState).map(([s, n]) => `${s} ${n}`).join(', ') || 'none'}`,
    `Secrets looked for: ${scan.secrets} in ${scan.files} files (${(scan.bytes / 1e6).toFixed(1)} MB of logs, histories and dumps); found: ${scan.hits.length}`,
    ...scan.hits.map((h) => `  - a ${h.kind} in ${h.file}`),
    ...reports.flatMap((r) => r.notes.map((n) => `- ${r.scenario}: ${n}`)),
  ];
  const text = lines.join('\n');
  await writeFile(join(runDir, 'summary.md'), `${text}\n`);
  const failures: string[] = [];
  for (const k of ['doubleConfirmed', 'paymentsLost', 'eventsLost', 'stuck', 'duplicateAddresses', 'http5xx', 'partialWrites'] as const) {
    if (total[k] > 0) failures.push(`${k} = ${total[k]}`);
  }
  if (scan.hits.length > 0) failures.push(`${scan.hits.length} secrets found in logs, histories or dumps`);
  if (reports.length === 0) failures.push('no scenario reported any counts');
  return { text, failures };
}
