import type { ActivityOptions } from '@temporalio/workflow';

/**
 * How a workflow hands a committed event to the webhook fan-out: the `dispatchEvent` activity on
 * the deployment's webhooks task queue. It makes the first attempt at each endpoint (each given
 * 10 s) and heartbeats meanwhile; a worker that dies mid-fan-out is noticed within the heartbeat
 * timeout and the activity runs again (logged attempts are not resent). Payment links recorded
 * before the outbox relay (patch `outbox-relay`) still hand their event over this way.
 */
export function webhookHandoverOptions(webhookTaskQueue: string): ActivityOptions {
  return {
    taskQueue: webhookTaskQueue,
    startToCloseTimeout: '30 seconds',
    heartbeatTimeout: '10 seconds',
    retry: { initialInterval: '1 second', maximumInterval: '1 minute' },
  };
}
