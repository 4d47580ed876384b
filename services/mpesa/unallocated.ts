import type { Client } from '@temporalio/client';
import { isId } from '../../domain/ids.js';
import type { Logger } from 'pino';
import type { DatabasePool } from 'slonik';
import {
  assignC2bPayment, findStoreC2bPayment, listUnallocatedC2b, markC2bForRefund, unassignC2bPayment, type C2bPaymentRow,
} from '../../db/mpesa-c2b-repo.js';
import { findLinkById } from '../../db/payment-link-repo.js';
import { AppError, notFound } from '../../domain/errors.js';
import { c2bPaymentKey, wholeShillings } from '../../rails/mpesa/c2b.js';
import { tellMobileMoneyCallback } from '../../temporal-client/index.js';
import type { StoreScope } from '../scope.js';

/**
 * Unallocated M-Pesa payments: paybill or till payments that matched no link (a typo the check
 * character caught, a closed link, a till payment whose amount no single open link has due), kept with what
 * Daraja sent. An owner or developer assigns one to a link (audited); the link then counts it as
 * usual, from the stored row.
 */
export function unallocatedDto(row: C2bPaymentRow) {
  return {
    transId: row.trans_id,
    amount: wholeShillings(row.amount) ?? row.amount,
    currency: 'KES' as const,
    transactionType: row.transaction_type,
    transTime: row.trans_time,
    billRefNumber: row.bill_ref,
    payerName: row.payer_name,
    /** As Daraja sends it: masked or hashed. */
    msisdn: row.msisdn,
    state: row.state,
    linkId: row.link_id,
    assignedBy: row.assigned_by,
    assignedAt: row.assigned_at,
    /** Marked for refund outside Malipo: by whom (`key:<id>` or `user:<id>`), when, and the note given. */
    refundMarkedBy: row.refund_marked_by,
    refundMarkedAt: row.refund_marked_at,
    refundNote: row.refund_note,
    receivedAt: row.received_at,
  };
}

export async function listUnallocatedPayments(
  deps: { pool: DatabasePool }, scope: StoreScope, q: { limit: number; page: number; state?: 'unallocated' | 'refund_outside' },
) {
  const { rows, total } = await listUnallocatedC2b(deps.pool, scope.storeId, scope.environment, q.limit, q.page, q.state);
  return { data: rows.map(unallocatedDto), page: q.page, limit: q.limit, total, hasMore: q.page * q.limit < total };
}

/** The store's payment with this TransID, when it is still unallocated; a 404 or 409 otherwise. */
async function unallocatedPayment(pool: DatabasePool, scope: StoreScope, transId: string): Promise<C2bPaymentRow> {
  // M-Pesa TransIDs are letters and digits: anything else names no payment and never reaches the database.
  const payment = /^[A-Za-z0-9]{1,40}$/.test(transId) ? await findStoreC2bPayment(pool, scope.storeId, scope.environment, transId) : null;
  if (!payment) throw notFound('unallocated payment');
  if (payment.state !== 'unallocated') {
    throw new AppError('invalid_state', `This payment is ${payment.state}${payment.link_id ? ` (link ${payment.link_id})` : ''}, not unallocated.`);
  }
  return payment;
}

/**
 * Marks an unallocated payment for refund outside Malipo (the merchant reverses it with M-Pesa):
 * it leaves the unallocated list, can no longer be assigned, and counts nowhere; `by`, the time
 * and the note are recorded.
 */
export async function markUnallocatedForRefund(
  deps: { pool: DatabasePool; logger?: Logger },
  scope: StoreScope,
  input: { transId: string; by: string; note: string | null },
) {
  const payment = await unallocatedPayment(deps.pool, scope, input.transId);
  const marked = await markC2bForRefund(deps.pool, payment.id, input.by, input.note);
  if (!marked) throw new AppError('invalid_state', 'This payment was just assigned or changed; fetch it again.');
  deps.logger?.info({ storeId: scope.storeId, transId: input.transId, by: input.by }, 'Unallocated M-Pesa payment marked for refund outside Malipo');
  return unallocatedDto(marked);
}

/** Assigns an unallocated payment to a link of the same store and environment; `by` is recorded. */
export async function assignUnallocatedPayment(
  deps: { pool: DatabasePool; temporal: Client; logger?: Logger },
  scope: StoreScope,
  input: { transId: string; linkId: string; by: string },
) {
  const payment = await unallocatedPayment(deps.pool, scope, input.transId);
  const link = isId('paymentLink', input.linkId) || isId('invoice', input.linkId) ? await findLinkById(deps.pool, input.linkId) : null;
  if (!link || link.store_id !== scope.storeId || link.environment !== scope.environment) throw new AppError('not_found', 'No such payment link.', 'linkId');
  if (link.mobile_money_account_ref === null) throw new AppError('rail_not_available', 'This link does not take M-Pesa payments (MOBILE_MONEY is not enabled on it).', 'linkId');
  const assigned = await assignC2bPayment(deps.pool, payment.id, link.id, input.by);
  if (!assigned) throw new AppError('invalid_state', 'This payment was just assigned or changed; fetch it again.');
  deps.logger?.info({ storeId: scope.storeId, transId: input.transId, linkId: link.id, by: input.by }, 'Unallocated M-Pesa payment assigned to a link');
  let told: boolean;
  try {
    told = await tellMobileMoneyCallback(deps.temporal, link.id, c2bPaymentKey(assigned.shortcode, assigned.trans_id));
  } catch {
    await unassignC2bPayment(deps.pool, payment.id);
    throw new AppError('upstream_unavailable', 'The payment engine could not be reached; nothing was assigned. Retry shortly.');
  }
  if (!told) {
    await unassignC2bPayment(deps.pool, payment.id);
    throw new AppError('invalid_state', 'This link no longer watches for payments (its late window is over); nothing was assigned.', 'linkId');
  }
  return unallocatedDto(assigned);
}
