import { context, propagation, SpanKind, type Attributes, type Context, type Tracer } from '@opentelemetry/api';
import { W3CTraceContextPropagator } from '@opentelemetry/core';
import { OTLPTraceExporter } from '@opentelemetry/exporter-trace-otlp-http';
import { Resource } from '@opentelemetry/resources';
import {
  AlwaysOffSampler,
  BasicTracerProvider,
  AlwaysOnSampler,
  BatchSpanProcessor,
  ParentBasedSampler,
  SamplingDecision,
  TraceIdRatioBasedSampler,
  type Sampler,
  type SamplingResult,
} from '@opentelemetry/sdk-trace-base';
import { AsyncLocalStorageContextManager } from '@opentelemetry/context-async-hooks';
import { ATTR_HTTP_REQUEST_METHOD, ATTR_SERVICE_NAME, ATTR_SERVICE_VERSION } from '@opentelemetry/semantic-conventions';
import {
  makeWorkflowExporter,
  OpenTelemetryActivityInboundInterceptor,
  OpenTelemetryActivityOutboundInterceptor,
  OpenTelemetryWorkflowClientInterceptor,
} from '@temporalio/interceptors-opentelemetry';
import type { WorkflowClientInterceptor } from '@temporalio/client';
import type { TracingSettings } from '../config/config.js';
import type { WorkerTracing } from '../worker/worker.js';

/**
 * One process's tracing, made only when OTEL_EXPORTER_OTLP_ENDPOINT is set (docs/tracing.md):
 * with it unset nothing here is loaded into the request path, no interceptor is installed and no
 * span is made. Spans are batched and POSTed as OTLP/HTTP JSON.
 *
 * Only the context manager and the propagator are registered globally (Temporal's interceptors
 * read the active context and inject it through them); the tracer provider is not. Our spans and
 * Temporal's come from this provider's tracer, handed to them. A library that traces itself
 * through the global API (slonik makes several spans per query) then stays untraced, and its
 * spans neither crowd the traces nor cost their export. `shutdown` unregisters what was registered.
 * The composition roots import this module only when tracing is on, so the SDK is not even loaded
 * otherwise.
 */
export interface Tracing {
  /** The tracer of our own spans: the API's server spans and the webhook POSTs. */
  readonly tracer: Tracer;
  /** For the Temporal client: starts, signals and updates carry the caller's context to the workflow. */
  readonly clientInterceptors: { workflow: WorkflowClientInterceptor[] };
  /** For a worker: RunActivity spans from the headers, and the sink the workflows' spans leave the sandbox by. */
  readonly worker: WorkerTracing;
  /** Exports what is buffered now (a test before it reads the receiver; a process before it exits). */
  flush(): Promise<void>;
  shutdown(): Promise<void>;
}

/** What a process is called in traces when OTEL_SERVICE_NAME does not say. */
export type ProcessRole = 'malipo-api' | 'malipo-worker' | 'malipo';

export function startTracing(settings: TracingSettings | undefined, role: ProcessRole): Tracing | undefined {
  if (!settings) return undefined;
  const resource = new Resource({ [ATTR_SERVICE_NAME]: settings.serviceName ?? role, [ATTR_SERVICE_VERSION]: '0.1.0' });
  const exporter = new OTLPTraceExporter({ url: settings.tracesUrl });
  const processor = new BatchSpanProcessor(exporter);
  const provider = new BasicTracerProvider({ resource, sampler: samplerOf(settings), spanProcessors: [processor] });
  context.setGlobalContextManager(new AsyncLocalStorageContextManager().enable());
  // W3C trace context as the only propagator: a caller's `baggage` header is not taken in, so
  // nothing it says travels on to workflows or to merchants.
  propagation.setGlobalPropagator(new W3CTraceContextPropagator());
  const tracer = provider.getTracer('malipo');
  return {
    tracer,
    clientInterceptors: { workflow: [new OpenTelemetryWorkflowClientInterceptor({ tracer })] },
    worker: {
      activityInterceptors: [(ctx) => ({ inbound: new OpenTelemetryActivityInboundInterceptor(ctx, { tracer }), outbound: new OpenTelemetryActivityOutboundInterceptor(ctx) })],
      // Workflow code cannot reach the network: its spans are handed out through this sink and exported here.
      sinks: { exporter: makeWorkflowExporter(processor, resource) },
    },
    flush: () => provider.forceFlush(),
    async shutdown() {
      await provider.shutdown();
      context.disable();
      propagation.disable();
    },
  };
}

/**
 * The default sampler's decision for a span that begins a trace: a write (a request's server
 * span, any method but GET and HEAD) is always kept; anything else at the ratio, by its trace id:
 * reads (most of the API's requests, and they start nothing), and what a process does on its own
 * (a query outside any request, a workflow the workers start, a chain watcher's ticks). A payment's
 * trace starts with a write, so it is always whole.
 */
class WritesAlwaysSampler implements Sampler {
  private readonly others: TraceIdRatioBasedSampler;
  constructor(private readonly ratio: number) {
    this.others = new TraceIdRatioBasedSampler(ratio);
  }

  shouldSample(ctx: Context, traceId: string, _name: string, kind: SpanKind, attributes: Attributes): SamplingResult {
    const method = attributes[ATTR_HTTP_REQUEST_METHOD];
    const write = kind === SpanKind.SERVER && typeof method === 'string' && method !== 'GET' && method !== 'HEAD';
    return write ? { decision: SamplingDecision.RECORD_AND_SAMPLED } : this.others.shouldSample(ctx, traceId);
  }

  toString(): string {
    return `WritesAlwaysSampler{${this.ratio}}`;
  }
}

/** OTEL_TRACES_SAMPLER as OpenTelemetry's SDKs read it, plus ours; the parent-based ones keep a sampled trace whole. */
export function samplerOf(settings: TracingSettings): Sampler {
  const ratio = new TraceIdRatioBasedSampler(settings.samplerRatio);
  switch (settings.sampler) {
    case 'parentbased_writes_always':
      return new ParentBasedSampler({ root: new WritesAlwaysSampler(settings.samplerRatio) });
    case 'always_on':
      return new AlwaysOnSampler();
    case 'always_off':
      return new AlwaysOffSampler();
    case 'traceidratio':
      return ratio;
    case 'parentbased_always_off':
      return new ParentBasedSampler({ root: new AlwaysOffSampler() });
    case 'parentbased_traceidratio':
      return new ParentBasedSampler({ root: ratio });
    case 'parentbased_always_on':
      return new ParentBasedSampler({ root: new AlwaysOnSampler() });
  }
}
