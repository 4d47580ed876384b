import { z } from 'zod/v4';
import { findInvoiceView } from '../../../db/invoice-repo.js';
import { AppError } from '../../../domain/errors.js';
import { newId } from '../../../domain/ids.js';
import { parseUsdt } from '../../../domain/money.js';
import { invoiceDto, invoiceNetworks, railOfNetwork } from '../../dto/invoice.js';
import { assertRailsAvailable, openPaymentRequest } from '../../services/payment-requests.js';
import { defineRoute } from '../../route.js';
import { metadataSchema, usdtAmountSchema } from '../common-schemas.js';
import { invoiceSchema } from './schemas.js';

export const createInvoiceRoute = defineRoute({
  method: 'POST',
  url: '/v1/invoices',
  operationId: 'createInvoice',
  summary: 'Create a single-network USDT invoice (environment from the key)',
  tags: ['Invoices'],
  auth: 'secret',
  body: z.strictObject({
    amount: usdtAmountSchema,
    network: z.enum(invoiceNetworks),
    token: z.literal('USDT', { error: 'only USDT is supported' }).default('USDT'),
    metadata: metadataSchema.optional(),
    expiresInMinutes: z.number().int('must be an integer').min(1).max(43_200).default(1440),
  }),
  responses: { 201: { description: 'Created (the same shape as the public lookup)', schema: invoiceSchema } },
  handler: async ({ deps, auth, body, reply }) => {
    if (body.network === 'SOL') {
      // The safe shape carries an address, not a Solana Pay request: a payment to the bare wallet
      // holds no reference, so it could not be matched to the invoice. Refuse rather than lose it.
      throw new AppError('invalid_field', "Solana invoices are not supported: the invoice shape cannot carry the Solana Pay reference that identifies the payment. Use a payment link with USDT_SOL (its checkout shows the Solana Pay QR code).", 'network');
    }
    const rail = railOfNetwork[body.network];
    await assertRailsAvailable(deps, auth, [rail], 'network');
    const row = await openPaymentRequest(deps, auth, {
      kind: 'invoice',
      id: newId('invoice'),
      rails: [rail],
      usdtMicro: parseUsdt(body.amount),
      kes: null,
      rate: null,
      description: null,
      merchantRef: null,
      metadata: body.metadata ?? {},
      redirectUrl: null,
      expiresInMinutes: body.expiresInMinutes,
    });
    reply.status(201);
    return invoiceDto((await findInvoiceView(deps.pool, row.id))!);
  },
});
