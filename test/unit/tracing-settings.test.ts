import { describe, expect, it } from '@jest/globals';
import { ROOT_CONTEXT, SpanKind, trace, TraceFlags } from '@opentelemetry/api';
import { SamplingDecision } from '@opentelemetry/sdk-trace-base';
import { ConfigError, loadConfig } from '../../config/config.js';
import { samplerOf } from '../../runtime/tracing.js';

const endpoint = { OTEL_EXPORTER_OTLP_ENDPOINT: 'http://collector.internal:4318/' };
/** Trace ids whose ratio decision is known: TraceIdRatioBasedSampler keeps an id whose 32-bit words, XORed, fall under ratio × 2^32. */
const lowId = '00000000000000000000000000000001';
const highId = '0000000000000000000000007fffffff';

describe('tracing settings (OTEL_*)', () => {
  it('are off unless an OTLP endpoint is named', () => {
    expect(loadConfig({}).tracing).toBeUndefined();
    expect(loadConfig({ OTEL_SERVICE_NAME: 'x', OTEL_TRACES_SAMPLER: 'always_on' }).tracing).toBeUndefined();
  });

  it('send to <endpoint>/v1/traces, or to the traces endpoint when that is named', () => {
    expect(loadConfig(endpoint).tracing).toEqual({ tracesUrl: 'http://collector.internal:4318/v1/traces', serviceName: undefined, sampler: 'parentbased_writes_always', samplerRatio: 0.1 });
    expect(loadConfig({ ...endpoint, OTEL_EXPORTER_OTLP_TRACES_ENDPOINT: 'https://c.example/otlp/traces' }).tracing?.tracesUrl).toBe('https://c.example/otlp/traces');
    expect(loadConfig({ ...endpoint, OTEL_TRACES_SAMPLER: 'parentbased_traceidratio' }).tracing).toMatchObject({ samplerRatio: 1 });
  });

  it('refuse a sampler or ratio OpenTelemetry does not define', () => {
    expect(() => loadConfig({ ...endpoint, OTEL_TRACES_SAMPLER: 'sometimes' })).toThrow(ConfigError);
    expect(() => loadConfig({ ...endpoint, OTEL_TRACES_SAMPLER_ARG: '1.5' })).toThrow(ConfigError);
  });
});

describe('the default sampler (parentbased_writes_always)', () => {
  const sampler = samplerOf(loadConfig({ ...endpoint, OTEL_TRACES_SAMPLER_ARG: '0.25' }).tracing!);
  const decide = (traceId: string, kind: SpanKind, method?: string, parent = ROOT_CONTEXT) =>
    sampler.shouldSample(parent, traceId, 'span', kind, method ? { 'http.request.method': method } : {}, []).decision;

  it('keeps every write, whatever the trace id', () => {
    expect(decide(highId, SpanKind.SERVER, 'POST')).toBe(SamplingDecision.RECORD_AND_SAMPLED);
    expect(decide(highId, SpanKind.SERVER, 'DELETE')).toBe(SamplingDecision.RECORD_AND_SAMPLED);
  });

  it('keeps reads, and what a process starts on its own, at the ratio, by trace id', () => {
    expect(decide(lowId, SpanKind.SERVER, 'GET')).toBe(SamplingDecision.RECORD_AND_SAMPLED);
    expect(decide(highId, SpanKind.SERVER, 'GET')).toBe(SamplingDecision.NOT_RECORD);
    expect(decide(highId, SpanKind.SERVER, 'HEAD')).toBe(SamplingDecision.NOT_RECORD);
    // A workflow a worker starts (client), a query outside any request (internal).
    expect(decide(lowId, SpanKind.CLIENT)).toBe(SamplingDecision.RECORD_AND_SAMPLED);
    expect(decide(highId, SpanKind.CLIENT)).toBe(SamplingDecision.NOT_RECORD);
    expect(decide(highId, SpanKind.INTERNAL)).toBe(SamplingDecision.NOT_RECORD);
  });

  it('follows the parent: a sampled trace stays whole, an unsampled one stays out', () => {
    const parent = (flags: TraceFlags) => trace.setSpanContext(ROOT_CONTEXT, { traceId: highId, spanId: '0000000000000001', traceFlags: flags, isRemote: true });
    expect(decide(highId, SpanKind.SERVER, 'GET', parent(TraceFlags.SAMPLED))).toBe(SamplingDecision.RECORD_AND_SAMPLED);
    expect(decide(highId, SpanKind.SERVER, 'POST', parent(TraceFlags.NONE))).toBe(SamplingDecision.NOT_RECORD);
  });
});
