import type { Client } from '@temporalio/client';
import type { Logger } from 'pino';
import type { DatabasePool } from 'slonik';
import {
  findC2bTokenOwner, findLinkByAccountRef, recordC2bPayment, recordSuspiciousC2bPost, setC2bState, type C2bPaymentRow, type C2bTokenOwner,
} from '../../db/mpesa-c2b-repo.js';
import { AppError } from '../../domain/errors.js';
import { normalizeAccountRef } from '../../rails/mpesa/account-ref.js';
import {
  c2bAccept, c2bAcknowledge, c2bFingerprint, c2bPaymentKey, c2bRejectAccount, hashC2bToken, isBuyGoods, payerName, wholeShillings, type C2bPost,
} from '../../rails/mpesa/c2b.js';
import { tellMobileMoneyCallback } from '../../temporal-client/index.js';
import { insertEvent } from '../../db/event-repo.js';
import { findLinkById } from '../../db/payment-link-repo.js';
import { ensureRequestStarted } from '../payment-links/payment-requests.js';
import type { ServiceSettings } from '../settings.js';
import { storeWithItsLink } from './c2b-match.js';
import { unallocatedDto } from './unallocated.js';

export interface C2bDeps {
  pool: DatabasePool;
  temporal: Client;
  config: ServiceSettings;
  logger?: Pick<Logger, 'warn' | 'info'>;
  now?: () => Date;
}

/**
 * Paybill and till payments made from the M-Pesa menu (C2B). Daraja posts them, unsigned, to the
 * URLs registered for the shortcode; the per-shortcode token in the path is their only
 * credential, so a post to an unknown token confirms nothing and is kept as suspicious. A
 * confirmation is only a hint too: it is stored as received (once per TransID), matched to its link
 * by the account reference, and the link's workflow is told "this payment has news"; the settle
 * activity then reads the stored row (the amount that counts is its TransAmount) and the link
 * counts it like any other payment: partial, over, late or after cancel.
 */

/** Validation: answered from two indexed reads, well within Daraja's deadline. */
export async function validateC2bPayment(deps: C2bDeps, token: string, post: C2bPost): Promise<typeof c2bAccept | typeof c2bRejectAccount> {
  const owner = await ownerOrNotFound(deps, token, post);
  // Buy Goods payments carry no account number: nothing to check them against (matched by amount on confirmation).
  if (isBuyGoods(post.TransactionType)) return c2bAccept;
  const link = await openLinkOf(deps, owner, post.BillRefNumber);
  if (link === 'open' || owner.unallocated_allowed) return c2bAccept;
  deps.logger?.info({ storeId: owner.store_id, transId: post.TransID, reason: link }, 'M-Pesa C2B validation refused an account number');
  return c2bRejectAccount;
}

/** Confirmation: stored once per TransID, then handed to the link's workflow as a hint. */
export async function confirmC2bPayment(deps: C2bDeps, token: string, post: C2bPost): Promise<typeof c2bAcknowledge> {
  const owner = await ownerOrNotFound(deps, token, post);
  const amount = wholeShillings(post.TransAmount);
  if (amount === null) {
    await suspicious(deps, owner, 'malformed', post, `TransAmount ${post.TransAmount} is not whole shillings`);
    return c2bAcknowledge;
  }
  const ref = normalizeAccountRef(post.BillRefNumber ?? '');
  const toMatch = { storeId: owner.store_id, environment: owner.environment, transId: post.TransID, amount, accountRef: ref, buyGoods: isBuyGoods(post.TransactionType) };
  const { stored, row } = await storeWithItsLink(deps.pool, toMatch, (db, linkId) => recordC2bPayment(db, {
    store_id: owner.store_id,
    environment: owner.environment,
    shortcode: owner.shortcode,
    trans_id: post.TransID,
    transaction_type: post.TransactionType ?? null,
    trans_time: post.TransTime ?? null,
    amount,
    bill_ref: post.BillRefNumber ?? null,
    account_ref: ref,
    link_id: linkId,
    msisdn: post.MSISDN ?? null,
    payer_name: payerName(post),
    state: !linkId ? 'unallocated' : owner.settles_alone ? 'matched' : 'awaiting_evidence',
    fingerprint: c2bFingerprint(post),
    body: post,
  }));
  const log = { storeId: owner.store_id, transId: post.TransID, linkId: row.link_id, state: row.state };
  if (!stored && row.fingerprint !== c2bFingerprint(post)) {
    // The same TransID with other details: an altered replay. The first post stands; this one confirms nothing.
    await suspicious(deps, owner, 'altered', post, `TransID ${post.TransID} was received before with other details (amount ${row.amount}, reference ${row.bill_ref ?? 'none'})`);
    return c2bAcknowledge;
  }
  if (!stored) deps.logger?.info(log, 'M-Pesa C2B confirmation received again; counted once');
  else deps.logger?.info(log, 'M-Pesa C2B confirmation stored');
  if (row.state === 'unallocated') await announceUnallocated(deps, row);
  // A repeat signals again: it covers a crash between storing and signalling (the workflow counts a key once).
  if (row.state === 'matched') await signalLink(deps, row);
  return c2bAcknowledge;
}

async function ownerOrNotFound(deps: C2bDeps, token: string, post: C2bPost): Promise<C2bTokenOwner> {
  const owner = await findC2bTokenOwner(deps.pool, hashC2bToken(token));
  if (owner) return owner;
  // A guessed or stale URL: kept (without the token) for whoever investigates, then a 404.
  await recordSuspiciousC2bPost(deps.pool, { storeId: null, environment: null, kind: 'unknown_token', transId: post.TransID, reason: 'posted to an unknown C2B URL', body: post });
  deps.logger?.warn({ transId: post.TransID }, 'M-Pesa C2B post to an unknown token ignored');
  throw new AppError('not_found', 'No such callback.');
}

async function openLinkOf(deps: C2bDeps, owner: C2bTokenOwner, billRef: string | null | undefined): Promise<'open' | 'unknown' | 'closed'> {
  const ref = normalizeAccountRef(billRef ?? '');
  if (!ref) return 'unknown';
  const link = await findLinkByAccountRef(deps.pool, owner.store_id, owner.environment, ref);
  if (!link) return 'unknown';
  const now = (deps.now ?? (() => new Date()))().getTime();
  return (link.status === 'PENDING' || link.status === 'PROCESSING') && Date.parse(link.expires_at) > now ? 'open' : 'closed';
}

async function suspicious(deps: C2bDeps, owner: C2bTokenOwner, kind: 'altered' | 'malformed', post: C2bPost, reason: string): Promise<void> {
  await recordSuspiciousC2bPost(deps.pool, { storeId: owner.store_id, environment: owner.environment, kind, transId: post.TransID, reason, body: post });
  deps.logger?.warn({ storeId: owner.store_id, transId: post.TransID, kind }, 'Suspicious M-Pesa C2B post recorded; it confirms nothing');
}

/** Tells the link's workflow a payment names it; the hint carries the payment's key and nothing else. */
export async function signalLink(deps: C2bDeps, row: C2bPaymentRow): Promise<void> {
  const key = c2bPaymentKey(row.shortcode, row.trans_id);
  let delivered: boolean;
  try {
    delivered = await tellMobileMoneyCallback(deps.temporal, row.link_id!, key);
    if (!delivered) {
      // A link made a moment ago may not have its workflow yet (its start is handed off after the
      // answer): start it if its row says so, then tell it. A workflow that ended stays ended.
      const link = await findLinkById(deps.pool, row.link_id!);
      if (link && !link.workflow_started) {
        await ensureRequestStarted(deps, link);
        delivered = await tellMobileMoneyCallback(deps.temporal, row.link_id!, key);
      }
    }
  } catch {
    throw new AppError('upstream_unavailable', 'The confirmation could not be handed to the payment workflow; retry later.');
  }
  if (!delivered) {
    // The link stopped watching (its late window is over): the payment is kept as unallocated.
    await setC2bState(deps.pool, row.id, 'unallocated');
    await announceUnallocated(deps, { ...row, state: 'unallocated' });
    deps.logger?.warn({ linkId: row.link_id, transId: row.trans_id }, 'M-Pesa C2B payment for a link that stopped watching; kept as unallocated');
  }
}

/**
 * The `mobile_money.unallocated` event (once per payment: its dedupe key), with the payment as the
 * API lists it. Written to the outbox; the outbox sweeper delivers it (within about a minute).
 */
export async function announceUnallocated(deps: C2bDeps, row: C2bPaymentRow): Promise<void> {
  await insertEvent(deps.pool, {
    storeId: row.store_id,
    environment: row.environment,
    type: 'mobile_money.unallocated',
    dedupeKey: `mobile_money.unallocated:${row.environment}:${row.shortcode}:${row.trans_id}`,
    data: unallocatedDto(row),
    createdAt: new Date().toISOString(),
  });
}
