/** Task queues by workload, so a slow upstream on one cannot starve the others. */
export const taskQueues = ['payments', 'chains', 'webhooks'] as const;
export type TaskQueue = (typeof taskQueues)[number];

/**
 * The queue's name on the server. `TASK_QUEUE_PREFIX` lets several deployments (or parallel test
 * files) share one namespace without picking up each other's tasks.
 */
export function taskQueueName(prefix: string, queue: TaskQueue): string {
  return `${prefix}${queue}`;
}
