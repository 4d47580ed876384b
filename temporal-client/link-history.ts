import { isGrpcServiceError, type Client } from '@temporalio/client';
import type { temporal } from '@temporalio/proto';
import { paymentLinkWorkflowId } from '../domain/workflow-contract.js';

/** How many earlier runs (continue-as-new) a link's history is followed back through. */
const maxRuns = 5;
/** gRPC NOT_FOUND: no such workflow, or its history is past the namespace's retention. */
const notFound = 5;

export type LinkHistory = { found: true; history: temporal.api.history.v1.IHistory; runs: number } | { found: false };

/**
 * The history of a payment link's workflow, oldest event first, followed back through the runs
 * it continued from (at most `maxRuns`). Bounded by `deadlineMs`: a Temporal that cannot be
 * reached fails fast instead of holding a page. Throws when Temporal cannot answer.
 */
export async function fetchLinkHistory(client: Client, linkId: string, deadlineMs: number): Promise<LinkHistory> {
  const workflowId = paymentLinkWorkflowId(linkId);
  return client.withDeadline(Date.now() + deadlineMs, async () => {
    const runs: temporal.api.history.v1.IHistoryEvent[][] = [];
    let runId: string | undefined;
    for (let i = 0; i < maxRuns; i++) {
      let events: temporal.api.history.v1.IHistoryEvent[];
      try {
        events = (await client.workflow.getHandle(workflowId, runId).fetchHistory()).events ?? [];
      } catch (err) {
        if (isGrpcServiceError(err) && err.code === notFound) {
          if (runs.length === 0) return { found: false } as const;
          break; // an earlier run past retention: show what is left
        }
        throw err;
      }
      runs.unshift(events);
      runId = events[0]?.workflowExecutionStartedEventAttributes?.continuedExecutionRunId ?? undefined;
      if (!runId) break;
    }
    return { found: true, history: { events: runs.flat() }, runs: runs.length } as const;
  });
}
