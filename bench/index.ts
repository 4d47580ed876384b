// `npm run bench`: speed measurements (tests check behaviour; timings live only here).
import { benchDerive, benchMatch } from './match.js';

const which = process.argv.slice(2);
const want = (name: string) => which.length === 0 || which.includes(name);

if (want('match')) console.log('match', JSON.stringify(benchMatch()));
if (want('derive')) console.log('derive', JSON.stringify(benchDerive()));
if (want('start')) {
  const { benchColdStart } = await import('./cold-start.js');
  console.log('start', JSON.stringify(await benchColdStart()));
}
if (want('http')) {
  const { benchHttp } = await import('./http.js');
  console.log('http', JSON.stringify(await benchHttp()));
}
if (want('reads')) {
  const { benchReads } = await import('./reads.js');
  console.log('reads', JSON.stringify(await benchReads()));
}
if (want('create')) {
  const { benchCreate } = await import('./create.js');
  console.log('create', JSON.stringify(await benchCreate()));
}
if (want('api')) {
  const { benchApi } = await import('./api.js');
  console.log('api', JSON.stringify(await benchApi()));
}
if (want('chain')) {
  const { benchChainLatency } = await import('./chain-latency.js');
  console.log('chain', JSON.stringify(await benchChainLatency()));
}

if (want('watch')) {
  const { benchWatchSet } = await import('./watch-set.js');
  console.log('watch', JSON.stringify(await benchWatchSet()));
}

// Opt-in only (it seeds a million links): `npm run bench growth`.
if (which.includes('growth')) {
  const { benchGrowth } = await import('./growth.js');
  console.log('growth', JSON.stringify(await benchGrowth()));
}

// Opt-in only: `npm run bench demo` (time from `npm run demo` to both demo payments confirmed).
if (which.includes('demo')) {
  const { benchDemo } = await import('./demo.js');
  console.log('demo', JSON.stringify(await benchDemo()));
}

// Opt-in only (it builds the pinned server on first use and runs for several minutes).
if (which.includes('cluster')) {
  const { benchCluster } = await import('./cluster.js');
  console.log('cluster', JSON.stringify(await benchCluster()));
}

// Native Temporal connections keep the event loop alive; a benchmark ends when it has printed.
process.exit(0);
