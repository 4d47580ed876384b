import { z } from 'zod/v4';
import { environments } from '../../../domain/environment.js';
import { invoiceNetworks, invoiceStatuses } from '../../../services/invoices/dto.js';

export const invoiceSchema = z
  .object({
    id: z.string().meta({ example: 'inv_…' }),
    amount: z.string().describe('Six fractional digits').meta({ example: '25.000000' }),
    token: z.literal('USDT'),
    network: z.enum(invoiceNetworks),
    status: z.enum(invoiceStatuses),
    paymentAddress: z
      .string()
      .describe('Where to pay: the address, or for network SOL a Solana Pay transfer request (solana:<wallet>?amount=…&spl-token=<mint>&reference=<ref>&memo=<invoice id>) whose reference identifies the payment'),
    expiresAt: z.string(),
    txHash: z.string().nullable(),
    confirmations: z.number().int(),
    metadata: z.record(z.string(), z.unknown()),
    simulated: z.boolean(),
    environment: z.enum(environments),
    publishableKey: z.string(),
  })
  .strict()
  .meta({ id: 'Invoice' });
