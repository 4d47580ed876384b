// The fallback load generator where Debian's wrk is missing (bench/load.ts uses wrk otherwise):
// one autocannon run in its own process, so the load generator never shares the measured
// server's event loop: `node bin/run-ts.mjs bench/load-child.ts <file holding the LoadSpec as JSON>` prints the result.
import { readFileSync } from 'node:fs';
import autocannon from 'autocannon';
import { clientAddress, type LoadSpec } from './load.js';

const spec = JSON.parse(readFileSync(process.argv[2]!, 'utf8')) as LoadSpec;
const clients = spec.clients ?? 1_000;
const offset = spec.clientOffset ?? 0;
let next = 0;
const r = await autocannon({
  url: spec.base,
  connections: spec.connections,
  duration: spec.seconds,
  requests: [{
    setupRequest: (req: any) => {
      const n = next++;
      const i = n % spec.paths.length;
      const body = spec.bodies ? spec.bodies[n % spec.bodies.length] : spec.body;
      return {
        ...req, path: spec.paths[i], method: spec.method ?? 'GET', ...(body === undefined ? {} : { body }),
        headers: { ...req.headers, 'x-forwarded-for': clientAddress(offset + (n % clients)), ...spec.headers, ...spec.perPath?.[i] },
      };
    },
  }],
});
// Counted as wrk counts (bench/load.ts Load): answers of 400 and more.
const over399 = Object.entries(r.statusCodeStats ?? {}).reduce((sum, [code, s]) => sum + (Number(code) >= 400 ? (s as { count: number }).count : 0), 0);
console.log(JSON.stringify({ reqPerSec: Math.round(r.requests.average), p50Ms: r.latency.p50, p99Ms: r.latency.p99, non2xx: over399, errors: r.errors }));
