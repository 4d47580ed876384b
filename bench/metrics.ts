// What counting costs the hot read: GET /v1/payment-links/:id on the whole app with metrics on
// (a registry, the onResponse hook counting every answer) against the same app with them off, on
// the same database and pool, in alternating rounds (the machine is shared and noisy: only the
// ratio means something).
import { memoryRateLimitStore } from '../api/plugins/rate-limit.js';
import { buildApp } from '../runtime/http-app.js';
import { createMetricsRegistry } from '../runtime/metrics.js';
import { median, pinnedServer, type Load } from './load.js';
import { readFixture } from './read-fixture.js';

export async function benchMetrics(rounds = 3, seconds = 5) {
  const fixture = await readFixture('Bench metrics');
  const { config, deps } = fixture;
  try {
    const registry = createMetricsRegistry();
    const on = await buildApp({ ...deps, rateLimitStore: memoryRateLimitStore(), metrics: registry.metrics, metricsText: registry.render });
    const off = await buildApp({ ...deps, config: { ...config, metricsToken: undefined }, rateLimitStore: memoryRateLimitStore() });
    await on.listen({ host: '127.0.0.1', port: 0 });
    await off.listen({ host: '127.0.0.1', port: 0 });
    const base = (a: { server: { address(): unknown } }) => `http://127.0.0.1:${(a.server.address() as { port: number }).port}`;
    const runs: Record<'on' | 'off', Load[]> = { on: [], off: [] };
    await pinnedServer(async () => {
      await fixture.load(base(on), 2);
      await fixture.load(base(off), 2);
      for (let r = 0; r < rounds; r++) {
        runs.off.push(await fixture.load(base(off), seconds));
        runs.on.push(await fixture.load(base(on), seconds));
      }
    });
    await on.close();
    await off.close();
    const [a, b] = [median(runs.on), median(runs.off)];
    return { metricsOn: a, metricsOff: b, ratio: Math.round((a.reqPerSec / b.reqPerSec) * 100) / 100 };
  } finally {
    await fixture.close();
  }
}
