// What metrics and tracing together cost the hot read: GET /v1/payment-links/:id on the whole app
// with both on (the metrics hook counting every answer; a server span per request, batched and
// exported over OTLP/HTTP to a local collector that accepts and discards) against the same app
// with both off, on one database and pool, in alternating rounds.
//
// Tracing is started before each traced round and shut down after it: its context manager's
// AsyncLocalStorage, once used, costs every promise of the process (Node 20 runs it on async
// hooks), so leaving it on would slow the bare rounds too. The traced app is built once and
// reaches each round's tracer through a forwarding one.
//
// Two comparisons, each in alternating rounds. `idleProcess`: the bare app in a process where no
// AsyncLocalStorage ever ran, which is an API process only until it makes its first link: the
// Temporal client's NativeConnection.withDeadline (every workflow start) runs one, and so does
// every worker (the activity context). `steady`: both apps in a process where one has run, as any
// API process is from its first link on; this is what tracing costs in production.
import { AsyncLocalStorage } from 'node:async_hooks';
import { cpus } from 'node:os';
import type { Tracer } from '@opentelemetry/api';
import { memoryRateLimitStore } from '../api/plugins/rate-limit.js';
import { loadConfig } from '../config/config.js';
import { buildApp } from '../runtime/http-app.js';
import { createMetricsRegistry } from '../runtime/metrics.js';
import { startTracing, type Tracing } from '../runtime/tracing.js';
import { OtlpReceiver } from '../test/helpers/otlp-receiver.js';
import { median, pinnedServer, type Load } from './load.js';
import { readFixture } from './read-fixture.js';

type App = Awaited<ReturnType<typeof buildApp>>;
const base = (a: App) => `http://127.0.0.1:${(a.server.address() as { port: number }).port}`;

export async function benchObservability(rounds = 3, seconds = 5) {
  const fixture = await readFixture('Bench observability');
  const sink = await OtlpReceiver.start({ discard: true });
  const { config, deps } = fixture;
  // OTEL_TRACES_SAMPLER and its ratio as the bench's own environment says; unset, the default (reads at 0.1, writes always).
  const tracingSettings = loadConfig({
    DATABASE_URL: 'postgres://unused', OTEL_EXPORTER_OTLP_ENDPOINT: sink.url,
    ...(process.env.OTEL_TRACES_SAMPLER ? { OTEL_TRACES_SAMPLER: process.env.OTEL_TRACES_SAMPLER, OTEL_TRACES_SAMPLER_ARG: process.env.OTEL_TRACES_SAMPLER_ARG } : {}),
  }).tracing!;
  let tracing: Tracing | undefined;
  const tracer: Tracer = {
    startSpan: (...args) => tracing!.tracer.startSpan(...args),
    startActiveSpan: ((...args: Parameters<Tracer['startActiveSpan']>) => (tracing!.tracer.startActiveSpan as (...a: unknown[]) => unknown)(...args)) as Tracer['startActiveSpan'],
  };
  const registry = createMetricsRegistry();
  const off = await buildApp({ ...deps, config: { ...config, metricsToken: undefined }, rateLimitStore: memoryRateLimitStore() });
  const on = await buildApp({ ...deps, rateLimitStore: memoryRateLimitStore(), metrics: registry.metrics, metricsText: registry.render, tracer });
  await off.listen({ host: '127.0.0.1', port: 0 });
  await on.listen({ host: '127.0.0.1', port: 0 });
  const observedRound = async (s: number): Promise<Load> => {
    tracing = startTracing(tracingSettings, 'malipo-api')!;
    try {
      return await fixture.load(base(on), s);
    } finally {
      // Exports what is left, then unregisters the provider and the context manager.
      await tracing.shutdown();
    }
  };
  const compare = async () => {
    const runs: Record<'on' | 'off', Load[]> = { on: [], off: [] };
    for (let r = 0; r < rounds; r++) {
      runs.off.push(await fixture.load(base(off), seconds));
      runs.on.push(await observedRound(seconds));
    }
    const [a, b] = [median(runs.on), median(runs.off)];
    return { on: a, off: b, ratio: Math.round((a.reqPerSec / b.reqPerSec) * 100) / 100 };
  };
  try {
    const { idleProcess, steady } = await pinnedServer(async () => {
      await observedRound(2);
      await fixture.load(base(off), 2);
      const idle = await compare();
      // What NativeConnection.withDeadline does at an API's first workflow start.
      const storage = new AsyncLocalStorage<number>();
      storage.run(1, () => undefined);
      try {
        return { idleProcess: idle, steady: await compare() };
      } finally {
        storage.disable();
      }
    });
    // Unless told to sample nothing, the collector must have been sent spans, or the traced rounds measured nothing.
    if (sink.exports === 0 && tracingSettings.sampler !== 'always_off') throw new Error('the traced rounds exported no spans');
    return {
      cpu: `${cpus().length} × ${cpus()[0]?.model.trim() ?? 'unknown'}`,
      sampler: /ratio/.test(tracingSettings.sampler) ? `${tracingSettings.sampler} ${tracingSettings.samplerRatio}` : tracingSettings.sampler,
      steady, idleProcess, ratio: steady.ratio, otlpExports: sink.exports,
    };
  } finally {
    await on.close();
    await off.close();
    await sink.stop();
    await fixture.close();
  }
}
