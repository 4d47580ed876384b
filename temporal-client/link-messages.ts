import { WorkflowNotFoundError, type Client } from '@temporalio/client';
import type { RailId } from '../domain/rails.js';
import {
  cancelLink,
  mobileMoneyCallback,
  paymentConfirmed,
  paymentDropped,
  paymentLinkWorkflowId,
  paymentSeen,
  requestWorkflowId,
  simulatePayment,
  startMobileMoneyPayment,
  type MobileMoneyPromptResult,
  type PaymentReport,
} from '../domain/workflow-contract.js';
import type { LinkStatus } from '../domain/states.js';

type Owner = { kind: 'payment_link' | 'invoice'; id: string };

// Messages need no task queue: they go to a workflow by its id.

/**
 * Hints to a link's (or invoice's) workflow that the chain has news about a deposit: it reads the
 * recorded deposit itself before acting. Returns false when the workflow is gone (its watch window
 * closed: the deposit stays recorded).
 */
export async function tellDeposit(
  client: Client,
  owner: Owner,
  news: { state: 'seen' | 'confirmed'; report: PaymentReport } | { state: 'dropped'; rail: RailId; key: string },
): Promise<boolean> {
  const handle = client.workflow.getHandle(requestWorkflowId(owner.kind, owner.id));
  try {
    if (news.state === 'dropped') await handle.signal(paymentDropped, { rail: news.rail, key: news.key });
    else await handle.signal(news.state === 'seen' ? paymentSeen : paymentConfirmed, news.report);
    return true;
  } catch (err) {
    if (err instanceof WorkflowNotFoundError) return false;
    throw err;
  }
}

/** Daraja called back about a prompt: the workflow settles it with an STK query. False when the workflow is gone. */
export async function tellMobileMoneyCallback(client: Client, linkId: string, checkoutRequestId: string): Promise<boolean> {
  try {
    await client.workflow.getHandle(paymentLinkWorkflowId(linkId)).signal(mobileMoneyCallback, { key: checkoutRequestId });
    return true;
  } catch (err) {
    if (err instanceof WorkflowNotFoundError) return false;
    throw err;
  }
}

/**
 * Sends the M-Pesa prompt through the link's workflow (its validator checks the state; failures:
 * update-failures.ts). `updateId` names this request's update: a caller that asks again after an
 * error (the workflow reported missing while it was being started) passes the same id, so an
 * update the workflow already admitted is answered again, never run twice (a second prompt on the
 * customer's phone would be refused as "already open" and the first one's answer lost).
 */
export function promptMobileMoney(client: Client, linkId: string, phoneNumber: string, updateId?: string): Promise<MobileMoneyPromptResult> {
  return client.workflow
    .getHandle(paymentLinkWorkflowId(linkId))
    .executeUpdate(startMobileMoneyPayment, { args: [{ phoneNumber }], ...(updateId ? { updateId } : {}) });
}

export function cancelPaymentLink(client: Client, linkId: string): Promise<{ status: LinkStatus }> {
  return client.workflow.getHandle(paymentLinkWorkflowId(linkId)).executeUpdate(cancelLink);
}

export function simulateLinkPayment(client: Client, linkId: string, rail: RailId): Promise<{ status: LinkStatus }> {
  return client.workflow.getHandle(paymentLinkWorkflowId(linkId)).executeUpdate(simulatePayment, { args: [{ rail }] });
}
