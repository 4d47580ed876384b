// The workflow side of the webhook bench's throughput phase (bench/webhooks.ts bundles it for a
// worker of its own). It stands in for a payment-link workflow at the moment its event commits:
// already running, woken by a message (here a signal carrying the committed event's id, where a
// link is woken by its confirming activity's completion), it hands the event to the fan-out
// exactly as the link does: `dispatchEvent` on the deployment's webhooks task queue, with the
// link's activity options. The activity runs on the stack's real workers, not in the bench.
import { condition, defineSignal, proxyActivities, setHandler } from '@temporalio/workflow';
import type { DispatchResult } from '../activities/webhooks/dispatch.js';
import { webhookHandoverOptions } from '../workflows/webhook-handover.js';

export const eventCommittedSignal = defineSignal<[string]>('eventCommitted');

export async function benchEventHandover(input: { webhookTaskQueue: string }): Promise<DispatchResult> {
  let eventId: string | undefined;
  setHandler(eventCommittedSignal, (id) => {
    eventId = id;
  });
  await condition(() => eventId !== undefined);
  const { dispatchEvent } = proxyActivities<{ dispatchEvent(i: { eventId: string }): Promise<DispatchResult> }>(webhookHandoverOptions(input.webhookTaskQueue));
  return dispatchEvent({ eventId: eventId! });
}
