import { z } from 'zod/v4';
import { MoneyError, parseUsdt } from '../../domain/money.js';

/** A USDT amount as a decimal string, checked by the same rules the money module applies. */
export const usdtAmountSchema = z
  .string({ error: 'must be a decimal string such as "10.50" (a string, not a number)' })
  .superRefine((value, ctx) => {
    try {
      parseUsdt(value);
    } catch (err) {
      if (!(err instanceof MoneyError)) throw err;
      ctx.addIssue({ code: 'custom', message: err.message });
    }
  })
  .meta({ example: '10.50' });

/** Free-form merchant metadata: a JSON object, echoed unchanged, at most 16 KB serialized. */
export const metadataSchema = z
  .record(z.string(), z.unknown())
  .refine((m) => Buffer.byteLength(JSON.stringify(m)) <= 16 * 1024, 'must be at most 16 KB when serialized');
