import { randomUUID } from 'node:crypto';
import type { FastifyBaseLogger } from 'fastify';
import { AppError } from '../../domain/errors.js';
import { countRecentPrompts } from '../../db/mpesa-repo.js';
import { maxPromptsPerPhone, phonePromptWindowMinutes } from '../../domain/mpesa/prompt-limits.js';
import { checkPhoneNumber } from '../../domain/phone.js';
import { promptMobileMoney, updateFailureToAppError } from '../../temporal-client/index.js';
import type { ServiceDeps } from '../deps.js';
import { findLinkById } from '../../db/payment-link-repo.js';
import { ensureRequestStarted } from '../payment-links/payment-requests.js';
import { WorkflowNotFoundError } from '@temporalio/common';

/**
 * Sends the M-Pesa prompt for a link through its workflow (the update validates the state and
 * runs the STK push activity). Used by the merchant API and the hosted checkout alike; the
 * caller has already checked that the link exists for it.
 */
export async function sendMobileMoneyPrompt(
  deps: ServiceDeps,
  linkId: string,
  phoneNumber: string,
  log: FastifyBaseLogger,
): Promise<{ ok: true; checkoutRequestId: string }> {
  const phone = checkPhoneNumber(phoneNumber);
  if (!phone.ok) throw new AppError('invalid_field', `Invalid 'phoneNumber': ${phone.message}`, 'phoneNumber');
  await refuseIfPhoneOverLimit(deps, phone.phone);
  try {
    // One update id for this request: asked again below, an update already admitted is answered, not run again.
    const updateId = `prompt-${randomUUID()}`;
    const result = await promptMobileMoney(deps.temporal, linkId, phone.phone, updateId).catch(async (err) => {
      // A link made while Temporal could not be reached, or a moment ago (its start handed off after
      // the 201 and still in flight), may not have its workflow yet: start it if the row says it is
      // not, then prompt again. Asked once more even when the row says started: the hand-off may
      // have recorded its start between this update and the read. A closed workflow answers
      // not-found again (ids are never reused), and that error stands.
      if (!(err instanceof WorkflowNotFoundError)) throw err;
      const row = await findLinkById(deps.pool, linkId);
      if (!row) throw err;
      await ensureRequestStarted(deps, row);
      return promptMobileMoney(deps.temporal, linkId, phone.phone, updateId);
    });
    return { ok: true, checkoutRequestId: result.checkoutRequestId };
  } catch (err) {
    if (err instanceof AppError) throw err;
    const mapped = updateFailureToAppError('prompt', err);
    if (mapped) {
      if (mapped.status >= 500) log.warn({ err, linkId }, 'M-Pesa prompt failed');
      throw mapped;
    }
    log.error({ err, linkId }, 'M-Pesa prompt update failed');
    throw new AppError('upstream_failed', 'The payment engine could not send the prompt; retry shortly.');
  }
}

/**
 * Every prompt rings a customer's phone, and the checkout is public: one phone gets at most
 * `maxPromptsPerPhone` prompts in `phonePromptWindowMinutes`, from any link of any store.
 */
async function refuseIfPhoneOverLimit(deps: ServiceDeps, phone: string): Promise<void> {
  const since = new Date(Date.now() - phonePromptWindowMinutes * 60_000);
  if ((await countRecentPrompts(deps.pool, phone, since)) < maxPromptsPerPhone) return;
  throw new AppError(
    'phone_prompt_limit',
    `This phone has had ${maxPromptsPerPhone} M-Pesa prompts in the last ${phonePromptWindowMinutes} minutes; wait a few minutes before trying again.`,
    'phoneNumber',
    { 'Retry-After': String(phonePromptWindowMinutes * 60) },
  );
}
