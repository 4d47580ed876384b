import { z } from 'zod/v4';
import { environments } from '../../../domain/environment.js';
import { railIdSchema } from '../../rail-schema.js';
import { linkStatuses } from '../../../domain/states.js';

export const linkIdParams = z.object({ id: z.string().regex(/^pl_[0-9a-z]{24}$/) });

const nullableString = z.string().nullable();

export const paymentLinkSchema = z
  .object({
    id: z.string().meta({ example: 'pl_3k9x…' }),
    status: z.enum(linkStatuses),
    environment: z.enum(environments),
    usdtAmount: z.string().meta({ example: '10.5' }),
    mobileMoneyAmount: z.number().int().nullable(),
    kesPerUsdt: nullableString.describe('Rate used for the KES amount, locked for the link'),
    enabledRails: z.array(railIdSchema()),
    simulatedOnlyRails: z
      .array(railIdSchema())
      .describe('Test mode: enabled rails with no test token configured. Only simulate-payment pays them; nothing sent on their network is detected. Always empty in live mode.'),
    tronAddress: nullableString,
    bscAddress: nullableString,
    ethAddress: nullableString,
    polygonAddress: nullableString,
    solanaAddress: nullableString,
    solanaReference: nullableString.describe('Solana Pay reference key of this link'),
    solanaPayUrl: nullableString,
    mobileMoneyShortcode: nullableString,
    mobileMoneyAccountRef: nullableString.describe(
      'With MOBILE_MONEY: the account number a customer types to pay this link from the M-Pesa menu (Paybill → business number → account number). 8 characters, the last a check character; matching forgives case, spaces, hyphens, O/0 and I/L/1, and refuses typos.',
    ),
    description: nullableString,
    merchantRef: nullableString,
    metadata: z.record(z.string(), z.unknown()).nullable(),
    redirectUrl: nullableString,
    expiresAt: z.string(),
    createdAt: z.string(),
    checkoutUrl: z.string(),
  })
  .meta({ id: 'PaymentLink' });

export const paymentLinkDetailSchema = paymentLinkSchema
  .extend({
    confirmedRail: railIdSchema().nullable(),
    confirmedAt: nullableString,
    externalId: nullableString,
    payer: nullableString,
    amountReceived: z.string().describe('USDT received so far (confirmed), decimal string'),
    amountsReceived: z
      .object({ USDT: z.string(), KES: z.string().optional() })
      .catchall(z.string())
      .describe('What was received in each currency (every confirmed payment: over, late, duplicate and after-cancel included), decimal strings. USDT always; KES once an M-Pesa payment was confirmed.')
      .meta({ example: { USDT: '0', KES: '1500' } }),
    simulated: z.boolean(),
    mobileMoneyAmountDue: z
      .number()
      .int()
      .nullable()
      .describe('With MOBILE_MONEY: whole KES still due; partial M-Pesa payments (paybill payments with the account reference) add up to mobileMoneyAmount'),
    payments: z.array(
      z.object({
        rail: railIdSchema(),
        externalId: nullableString,
        payer: nullableString,
        amount: nullableString.describe('In the unit of `currency`'),
        currency: z.string().describe("The payment's unit: its rail's currency (KES on MOBILE_MONEY, USDT on chain rails)").meta({ example: 'KES' }),
        state: z.enum(['initiated', 'seen', 'confirmed', 'failed', 'dropped']),
        disposition: z.enum(['payment', 'late', 'duplicate', 'after_cancel', 'underpaid', 'overpaid']).nullable(),
        failureReason: nullableString,
        createdAt: z.string(),
      }),
    ),
  })
  .meta({ id: 'PaymentLinkDetail' });
