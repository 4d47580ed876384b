// What metrics and tracing together cost the hot read: GET /v1/payment-links/:id on the whole app
// with both on (the metrics hook counting every answer; server spans, and slonik's own spans of
// the queries, batched and exported over OTLP/HTTP to a local collector that accepts and discards)
// against the same app with both off, on one seeded database, in alternating rounds.
//
// Each app runs in a process of its own (bench/observability-server.ts; tracing is process-wide),
// both pinned to the first core with the load generator on the second. Both processes have run an
// AsyncLocalStorage, as every API process has from its first workflow start: on Node 20 that costs
// every promise, with tracing or without, so a process that never ran one would flatter the bare app.
import { spawn, type ChildProcess } from 'node:child_process';
import { execFileSync } from 'node:child_process';
import { existsSync } from 'node:fs';
import { cpus } from 'node:os';
import { createInterface } from 'node:readline';
import { loadConfig } from '../config/config.js';
import { OtlpReceiver } from '../test/helpers/otlp-receiver.js';
import { median, type Load } from './load.js';
import { readFixture } from './read-fixture.js';

const tasksetPath = '/usr/bin/taskset';

/** Starts one app process and resolves with it and its port once it listens. */
function serve(databaseUrl: string, observed: boolean, env: Record<string, string>): Promise<{ child: ChildProcess; base: string }> {
  const child = spawn(process.execPath, ['bin/run-ts.mjs', 'bench/observability-server.ts', JSON.stringify({ databaseUrl, observed, env })], { stdio: ['ignore', 'pipe', 'inherit'] });
  return new Promise((resolve, reject) => {
    child.once('exit', (code) => reject(new Error(`the ${observed ? 'observed' : 'bare'} app exited (${code}) before listening`)));
    createInterface({ input: child.stdout! }).once('line', (line) => {
      const { port } = JSON.parse(line) as { port: number };
      // Every thread of it on the first core, as pinnedServer does for in-process servers.
      if (existsSync(tasksetPath) && cpus().length >= 2) execFileSync(tasksetPath, ['-a', '-p', '-c', '0', String(child.pid)], { stdio: 'ignore' });
      resolve({ child, base: `http://127.0.0.1:${port}` });
    });
  });
}

function stop(child: ChildProcess): Promise<void> {
  return new Promise((resolve) => {
    child.once('exit', () => resolve());
    child.kill('SIGTERM');
  });
}

export async function benchObservability(rounds = 5, seconds = 5) {
  const fixture = await readFixture('Bench observability');
  const sink = await OtlpReceiver.start({ discard: true });
  // OTEL_TRACES_SAMPLER and its ratio as the bench's own environment says; unset, the default.
  const env: Record<string, string> = { OTEL_EXPORTER_OTLP_ENDPOINT: sink.url, METRICS_TOKEN: 'bench-metrics-token-0123456789' };
  if (process.env.OTEL_TRACES_SAMPLER) env.OTEL_TRACES_SAMPLER = process.env.OTEL_TRACES_SAMPLER;
  if (process.env.OTEL_TRACES_SAMPLER_ARG) env.OTEL_TRACES_SAMPLER_ARG = process.env.OTEL_TRACES_SAMPLER_ARG;
  const tracing = loadConfig({ DATABASE_URL: fixture.databaseUrl, ...env }).tracing!;
  const [off, on] = [await serve(fixture.databaseUrl, false, env), await serve(fixture.databaseUrl, true, env)];
  try {
    await fixture.load(on.base, 2);
    await fixture.load(off.base, 2);
    const runs: Record<'on' | 'off', Load[]> = { on: [], off: [] };
    for (let r = 0; r < rounds; r++) {
      runs.off.push(await fixture.load(off.base, seconds));
      runs.on.push(await fixture.load(on.base, seconds));
    }
    const [a, b] = [median(runs.on), median(runs.off)];
    // Unless told to sample nothing, the collector must have been sent spans, or the traced app measured nothing.
    if (sink.exports === 0 && tracing.sampler !== 'always_off') throw new Error('the observed app exported no spans');
    return {
      cpu: `${cpus().length} × ${cpus()[0]?.model.trim() ?? 'unknown'}`,
      sampler: /ratio|writes/.test(tracing.sampler) ? `${tracing.sampler} ${tracing.samplerRatio}` : tracing.sampler,
      observedOn: a, observedOff: b, ratio: Math.round((a.reqPerSec / b.reqPerSec) * 100) / 100, otlpExports: sink.exports,
    };
  } finally {
    await stop(on.child);
    await stop(off.child);
    await sink.stop();
    await fixture.close();
  }
}
