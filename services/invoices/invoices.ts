import { findInvoiceView } from '../../db/invoice-repo.js';
import { AppError } from '../../domain/errors.js';
import { parseUsdt } from '../../domain/money.js';
import { invoiceDto, railOfNetwork, type InvoiceNetwork } from './dto.js';
import type { ServiceDeps } from '../deps.js';
import { findCreationContext } from '../../db/store-repo.js';
import type { StoreScope } from '../scope.js';
import { freshIds, type RequestIds } from '../request-ids.js';
import { assertRailsAvailable, openPaymentRequest, resumePaymentRequest } from '../payment-links/payment-requests.js';

export interface CreateInvoiceInput {
  amount: string;
  network: InvoiceNetwork;
  metadata?: Record<string, unknown>;
  expiresInMinutes: number;
}

/**
 * Creates a single-network USDT invoice (a payment request of kind `invoice`). Its id comes from
 * `ids`, so that a retry under the same Idempotency-Key completes the same invoice.
 */
export async function createInvoice(deps: ServiceDeps, auth: StoreScope, input: CreateInvoiceInput, ids: RequestIds = freshIds) {
  const rail = railOfNetwork[input.network];
  const id = await ids.idFor('invoice');
  // A retry of an Idempotency-Key whose first attempt died after writing the invoice completes that invoice.
  let row = ids.fresh ? null : await resumePaymentRequest(deps, auth, id);
  if (!row) {
    const store = await findCreationContext(deps.pool, auth.storeId, auth.environment);
    assertRailsAvailable(auth, [rail], 'network', store.connections);
    row = await openPaymentRequest(deps, auth, {
      kind: 'invoice',
      id,
      rails: [rail],
      usdtMicro: parseUsdt(input.amount),
      kes: null,
      rate: null,
      description: null,
      merchantRef: null,
      metadata: input.metadata ?? {},
      redirectUrl: null,
      expiresInMinutes: input.expiresInMinutes,
      correlationId: ids.correlationId,
    }, store);
  }
  return invoiceDto((await findInvoiceView(deps.pool, row.id))!);
}

/** The public shape of an invoice (anyone with its id: checkout pages poll it), or null. */
export async function findPublicInvoice(deps: Pick<ServiceDeps, 'pool'>, id: string) {
  const view = await findInvoiceView(deps.pool, id);
  return view ? invoiceDto(view) : null;
}
