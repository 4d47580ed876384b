import type { Client } from '@temporalio/client';
import { taskQueueName, type TaskQueue } from '../domain/task-queues.js';

/**
 * Where work is sent: the Temporal client and the deployment's task-queue prefix (several
 * deployments, or parallel test files, can share one namespace).
 */
export interface TemporalTarget {
  client: Client;
  taskQueuePrefix: string;
}

export function queueOf(target: TemporalTarget, queue: TaskQueue): string {
  return taskQueueName(target.taskQueuePrefix, queue);
}

/** The target of a part wired with a client and the deployment's Temporal settings. */
export function targetOf(deps: { temporal: Client; config: { temporal: { taskQueuePrefix: string } } }): TemporalTarget {
  return { client: deps.temporal, taskQueuePrefix: deps.config.temporal.taskQueuePrefix };
}
