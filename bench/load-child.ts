// One autocannon run in its own process, so the load generator never shares the measured
// server's event loop: `node bin/run-ts.mjs bench/load-child.ts '<json LoadSpec>'` prints the result.
import autocannon from 'autocannon';
import { clientAddress, type LoadSpec } from './load.js';

const spec = JSON.parse(process.argv[2]!) as LoadSpec;
let next = 0;
let client = spec.clientOffset ?? 0;
const r = await autocannon({
  url: spec.base,
  connections: spec.connections,
  duration: spec.seconds,
  requests: [{
    setupRequest: (req: any) => {
      const i = next++ % spec.paths.length;
      return { ...req, path: spec.paths[i], headers: { ...req.headers, 'x-forwarded-for': clientAddress(client++), ...spec.headers, ...spec.perPath?.[i] } };
    },
  }],
});
console.log(JSON.stringify({ reqPerSec: Math.round(r.requests.average), p50Ms: r.latency.p50, p99Ms: r.latency.p99, non2xx: r.non2xx, errors: r.errors }));
