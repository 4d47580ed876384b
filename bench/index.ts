// `npm run bench`: speed measurements (tests check behaviour; timings live only here). Each bench
// prints one JSON line; then one markdown table of every measure beside its same-run baseline
// (bench/table.ts). `npm run bench -- --baseline` (or `baseline`) also writes bench/BASELINE.md.
import { execFileSync } from 'node:child_process';
import { loadavg } from 'node:os';
import { writeFileSync } from 'node:fs';
import { machine, machineLine } from './guard.js';
import { benchDerive, benchMatch } from './match.js';
import { eventLoopTargetMs, table, type Results } from './table.js';

const args = process.argv.slice(2);
const writeBaseline = args.includes('--baseline') || args.includes('baseline');
const which = args.filter((a) => a !== '--baseline' && a !== 'baseline');
const want = (name: string) => which.length === 0 || which.includes(name);

const results: Results = {};
// The machine first, in the output and in what is written (BASELINE.md, the JSON lines).
const ranOn = machine();
console.log(machineLine(ranOn));
results.machine = ranOn;
const loadBefore = loadavg();
const startedAt = new Date();
const print = (name: string, result: unknown) => {
  results[name] = result;
  console.log(name, JSON.stringify(result));
};

// The event-loop figures' floor: this process's loop, idle, for 2 s (Node 20 counts the 10 ms interval).
if (['http', 'reads', 'create', 'api'].some(want)) {
  const { withEventLoopDelay } = await import('./load.js');
  print('eventLoopIdle', await withEventLoopDelay(async () => {
    await new Promise((r) => setTimeout(r, 2_000));
    return { seconds: 2 };
  }));
}
if (want('match')) print('match', benchMatch());
if (want('derive')) print('derive', benchDerive());
if (want('caches')) {
  const { benchCaches } = await import('./caches.js');
  print('caches', benchCaches());
}
// POST /v1/wallets/derive at c=8 against the same pair derived in process (bench/derive-route.ts).
if (want('derive-route')) {
  const { benchDeriveRoute } = await import('./derive-route.js');
  print('deriveRoute', await benchDeriveRoute());
}
if (want('start')) {
  const { benchColdStart } = await import('./cold-start.js');
  print('start', await benchColdStart());
}
if (want('http')) {
  const { benchHttp } = await import('./http.js');
  print('http', await benchHttp());
}
if (want('reads')) {
  const { benchReads } = await import('./reads.js');
  print('reads', await benchReads());
}
if (which.includes('metrics')) {
  const { benchMetrics } = await import('./metrics.js');
  print('metrics', await benchMetrics());
}
if (which.includes('observability')) {
  const { benchObservability } = await import('./observability.js');
  print('observability', await benchObservability());
}
if (want('create')) {
  const { benchCreate } = await import('./create.js');
  print('create', await benchCreate());
}
if (want('api')) {
  const { benchApi } = await import('./api.js');
  print('api', await benchApi());
}
if (want('chain')) {
  const { benchChainLatency } = await import('./chain-latency.js');
  print('chain', await benchChainLatency());
}

// Its own process: it runs its own Temporal server (the embedded default's SQLite file) and stack.
if (want('webhooks')) {
  const out = execFileSync(process.execPath, ['bin/run-ts.mjs', 'bench/webhooks.ts'], { encoding: 'utf8', stdio: ['ignore', 'pipe', 'inherit'], maxBuffer: 1 << 24 });
  print('webhooks', JSON.parse(out.slice(out.indexOf('{'))));
}

if (want('watch')) {
  const { benchWatchSet } = await import('./watch-set.js');
  print('watch', await benchWatchSet());
}

// Opt-in only (it seeds a million links): `npm run bench growth`.
if (which.includes('growth')) {
  const { benchGrowth } = await import('./growth.js');
  print('growth', await benchGrowth());
}

// Opt-in only: `npm run bench treasury-tron` (the same on TRON, against the TronGrid emulator).
if (which.includes('treasury-tron')) {
  const { benchTreasuryTron } = await import('./treasury-tron.js');
  print('treasury-tron', await benchTreasuryTron());
}

// Opt-in only: `npm run bench treasury` (the treasury's balance read of 10,000 handed-out addresses).
if (which.includes('treasury')) {
  const { benchTreasury } = await import('./treasury.js');
  print('treasury', await benchTreasury());
}
// Opt-in only: `npm run bench reconcile` (what the reconciler costs per 10,000 watched addresses).
if (which.includes('reconcile')) {
  const { benchReconcile } = await import('./reconcile.js');
  print('reconcile', await benchReconcile());
}

// Opt-in only: `npm run bench demo` (time from `npm run demo` to both demo payments confirmed).
if (which.includes('demo')) {
  const { benchDemo } = await import('./demo.js');
  print('demo', await benchDemo());
}

// Opt-in only (it builds the pinned server on first use and runs for several minutes).
if (which.includes('cluster')) {
  const { benchCluster } = await import('./cluster.js');
  print('cluster', await benchCluster());
}

const markdown = table(results);
console.log(`\n${machineLine(ranOn)}\n\n${markdown}`);

if (writeBaseline) {
  const run = (cmd: string, cmdArgs: string[]) => {
    try {
      return execFileSync(cmd, cmdArgs, { encoding: 'utf8' }).trim();
    } catch {
      return 'unknown';
    }
  };
  const avg = (l: number[]) => l.map((x) => x.toFixed(2)).join(', ');
  const ran = Object.keys(results).filter((name) => name !== 'machine');
  const text = `# Benchmark baseline

\`npm run bench -- --baseline\` wrote this file (bench/index.ts, the table from bench/table.ts).

- Date: ${run('date', ['-u'])} (started ${startedAt.toISOString()}, took ${Math.round((Date.now() - startedAt.getTime()) / 60_000)} min)
- Commit: ${run('git', ['rev-parse', '--short', 'HEAD'])} (plus the working tree's bench/ changes of this run)
- Machine: ${ranOn.cores} cores, ${ranOn.cpuModel} (/proc/cpuinfo), Node ${ranOn.node}
- Load averages (1, 5, 15 min): ${avg(loadBefore)} at the start, ${avg(loadavg())} at the end; \`uptime\`: ${run('uptime', [])}
- Benches: ${ran.join(', ')}

The machine is shared and noisy (the load averages above show what else ran), so absolute
numbers move from run to run. Each ratio compares the app with its baseline measured side by side
in the same run (alternating rounds), which is the figure to compare across runs.

${markdown}

Notes:

- HTTP loads (\`http\`, \`reads\`, \`create\`) come from Debian's wrk in its own process, pinned to
  the second core while the serving process is pinned to the first (bench/load.ts); enough client
  addresses that each stays within its rate limit. \`create\` serves from an API with no Temporal
  workers (as in the production topology), with the Temporal dev server pinned to the load's core,
  not the serving one (in a deployment Temporal runs beside the API, not in its CPU budget); the
  links' workflows start after their answers, and each app round waits for the last of them
  before the next round (\`allStartedAfterMs\`), so no start spills into a bare round. \`api\` drives the app from the bench process, which also
  runs the stack's workers, so its event-loop figures are upper bounds. \`webhooks\` runs in its own
  process with its own Temporal server (the embedded default's SQLite file); its throughput row
  commits the events to the outbox and lets the workers' relay send them, as in production (no
  Temporal task per event), and the fan-out called in process is a separate row.
- Event-loop delay: \`monitorEventLoopDelay({ resolution: 10 })\` in the serving process, enabled
  only while the measured load runs; p99 and max as \`percentile(99) / 1e6\` and \`max / 1e6\` ms.
  Node 20 records the whole interval between samples, so an idle loop reads about 10–13 ms (the
  \`eventLoopIdle\` line: this process idle for 2 s before the benches): the < ${eventLoopTargetMs} ms target is
  checked against the raw figure. Each baseline's own loop p99 is shown beside it: when the bare
  route's loop is also far above 20 ms, the machine (not the app) is most of the delay.
- Throughput rows are the median of alternating rounds (\`http\`, \`reads\`) or the best of them
  (\`create\`, \`derive\`, \`match\`).

The JSON lines of this run:

\`\`\`
machine ${JSON.stringify(ranOn)}
${ran.map((name) => `${name} ${JSON.stringify(results[name])}`).join('\n')}
\`\`\`
`;
  writeFileSync(new URL('./BASELINE.md', import.meta.url), text);
  console.log('\nwrote bench/BASELINE.md');
}

// Native Temporal connections keep the event loop alive; a benchmark ends when it has printed.
process.exit(0);
