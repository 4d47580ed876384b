import { createRequire } from 'node:module';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { bundleWorkflowCode, NativeConnection, Worker, type ActivityInterceptorsFactory, type InjectedSinks, type WorkflowBundle, type WorkflowBundleOption } from '@temporalio/worker';
import type { OpenTelemetrySinks } from '@temporalio/interceptors-opentelemetry';
import type { Logger } from 'pino';
import { createActivities, type ActivityDeps } from '../activities/index.js';
import { taskQueueName, taskQueues, type TaskQueue } from '../domain/task-queues.js';
import { correlationActivityInterceptor } from './correlation-interceptors.js';
import { runC2bHandoff } from './c2b-handoff.js';
import { runRequestStarter } from './request-starter.js';
import { runStatisticsKeeper } from './table-statistics.js';
import { defaultRelayPace, runWebhookRelay } from './webhook-relay.js';

const here = dirname(fileURLToPath(import.meta.url));
export const workflowsPath = join(here, '..', 'workflows', 'index.ts');

/**
 * The workflow interceptors bundled with the code. Every bundle carries the correlation id to the
 * activities (workflows/interceptors.ts); a traced one (OTEL_EXPORTER_OTLP_ENDPOINT set) first
 * opens OpenTelemetry's spans, then tags them with that id.
 */
function interceptorModules(traced: boolean): string[] {
  const correlation = join(here, '..', 'workflows', 'interceptors.ts');
  if (!traced) return [correlation];
  const otel = createRequire(import.meta.url).resolve('@temporalio/interceptors-opentelemetry/lib/workflow-interceptors');
  return [otel, join(here, '..', 'workflows', 'tracing-interceptors.ts'), correlation];
}

const bundlePromises = new Map<boolean, Promise<WorkflowBundle>>();

/**
 * Bundles the workflow code once per process (webpack takes a few seconds) and shares it among
 * the workers of every task queue. Imports in our TypeScript end in `.js`, so the bundler is told
 * to try `.ts` first. `traced`: with OpenTelemetry's workflow interceptors (a separate bundle, so
 * that tracing off costs the workflows nothing).
 */
export function workflowBundle(traced = false): Promise<WorkflowBundle> {
  let bundle = bundlePromises.get(traced);
  if (!bundle) {
    bundle = bundleWorkflowCode({
      workflowsPath,
      workflowInterceptorModules: interceptorModules(traced),
      logger: { log() {}, trace() {}, debug() {}, info() {}, warn() {}, error() {} } as never,
      webpackConfigHook: (config) => {
        config.resolve = { ...config.resolve, extensionAlias: { '.js': ['.ts', '.js'] } };
        return config;
      },
    });
    bundlePromises.set(traced, bundle);
  }
  return bundle;
}

/**
 * How many workflows each queue's Worker keeps in memory between their tasks (Temporal's sticky
 * cache). Left to the SDK, every Worker sizes its cache to the whole V8 heap (about 2,300 on a
 * 4 GB heap) as if it were alone, and this process runs one Worker per queue. A payment link's
 * workflow stays open for its late watch (a day by default), so the worker's memory grew with every
 * link made, about 270 KB each: 670 MB to 1.3 GB in five minutes of load (test/chaos/load.test.ts).
 * A workflow pushed out of the cache is replayed from its history at its next task; a link's
 * history is short. Together these bound the cache to roughly 160 MB.
 */
export const maxCachedWorkflows: Readonly<Record<TaskQueue, number>> = { payments: 400, chains: 50, webhooks: 150 };

/** What a worker traces with (runtime/tracing.ts makes it when OTEL_EXPORTER_OTLP_ENDPOINT is set). */
export interface WorkerTracing {
  /** OpenTelemetry's: a RunActivity span per activity, child of the workflow's StartActivity span. */
  activityInterceptors: ActivityInterceptorsFactory[];
  /** The sink the workflows' spans leave the sandbox by. */
  sinks: InjectedSinks<OpenTelemetrySinks>;
}

export interface WorkerSet {
  workers: Worker[];
  run(): Promise<void>;
  shutdown(): Promise<void>;
}

export interface WorkerOptions {
  connection: NativeConnection;
  namespace: string;
  deps: ActivityDeps;
  logger?: Logger;
  /** Task queues to serve; all by default. A deployment can split them across processes. */
  queues?: readonly TaskQueue[];
  /** The workflow code bundled ahead (the test suite bundles once per run); else bundled here. */
  workflowBundle?: WorkflowBundleOption;
  /** With tracing on (runtime/tracing.ts): the traced bundle, OpenTelemetry's activity interceptors and the workflows' span sink. */
  tracing?: WorkerTracing;
}

export async function createWorkers(opts: WorkerOptions): Promise<WorkerSet> {
  const activities = createActivities(opts.deps);
  const bundle = opts.workflowBundle ?? (await workflowBundle(opts.tracing !== undefined));
  // OpenTelemetry's first: the correlation interceptor tags the activity span it opens.
  const activityInterceptors = [...(opts.tracing?.activityInterceptors ?? []), correlationActivityInterceptor];
  const queues = opts.queues ?? taskQueues;
  const workers = await Promise.all(
    queues.map((q) =>
      Worker.create({
        connection: opts.connection,
        namespace: opts.namespace,
        taskQueue: taskQueueName(opts.deps.config.temporal.taskQueuePrefix, q),
        workflowBundle: bundle,
        activities,
        interceptors: { activity: activityInterceptors },
        ...(opts.tracing ? { sinks: opts.tracing.sinks } : {}),
        maxCachedWorkflows: maxCachedWorkflows[q],
        shutdownGraceTime: '10 seconds',
      }),
    ),
  );
  let running: Promise<void> | undefined;
  let starter: { stop(): Promise<void> } | undefined;
  let c2bHandoff: { stop(): Promise<void> } | undefined;
  let statistics: { stop(): Promise<void> } | undefined;
  let relay: { stop(): Promise<void> } | undefined;
  return {
    workers,
    run() {
      // The payments queue's workers also start the workflows of links made while Temporal was away.
      if (!running && queues.includes('payments')) {
        starter = runRequestStarter({ ...opts.deps, logger: opts.deps.logger ?? opts.logger });
        // ...and tell links of M-Pesa C2B confirmations stored but never handed to their workflow.
        c2bHandoff = runC2bHandoff({ ...opts.deps, logger: opts.deps.logger ?? opts.logger });
        // ...and refresh the planner statistics autovacuum did not (off, behind, or the embedded PGlite).
        statistics = runStatisticsKeeper({ pool: opts.deps.pool, logger: opts.deps.logger ?? opts.logger });
      }
      // The webhooks queue's workers also dispatch every event the moment it commits (the outbox relay).
      const relaySettings = opts.deps.config.webhooks.relay;
      if (!running && queues.includes('webhooks') && relaySettings.enabled) {
        relay = runWebhookRelay({ ...opts.deps, logger: opts.deps.logger ?? opts.logger }, { ...defaultRelayPace, pollMs: relaySettings.pollMs });
      }
      running ??= Promise.all(workers.map((w) => w.run())).then(() => undefined);
      return running;
    },
    async shutdown() {
      await starter?.stop();
      await c2bHandoff?.stop();
      await statistics?.stop();
      await relay?.stop();
      for (const w of workers) if (w.getState() === 'RUNNING') w.shutdown();
      await running;
    },
  };
}

