import { z } from 'zod/v4';
import { jsonDepthExceeds, jsonDepthRule, maxJsonDepth } from '../../domain/json-depth.js';
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

/** The most `metadata` may weigh, serialized. */
export const maxMetadataBytes = 16 * 1024;

/**
 * Free-form merchant metadata: a JSON object, echoed unchanged, nested at most 20 levels and at
 * most 16 KB serialized. The depth is checked first, without recursion, so that serializing it
 * to measure the size cannot overflow the stack (a body's fields are also checked on arrival:
 * api/plugins/body-depth.ts).
 */
export const metadataSchema = z
  .record(z.string(), z.unknown())
  .superRefine((m, ctx) => {
    if (jsonDepthExceeds(m, maxJsonDepth)) ctx.addIssue({ code: 'custom', message: jsonDepthRule(maxJsonDepth) });
    else if (Buffer.byteLength(JSON.stringify(m)) > maxMetadataBytes) ctx.addIssue({ code: 'custom', message: 'must be at most 16 KB when serialized' });
  })
  .describe(`Your own JSON object, returned as sent: nested at most ${maxJsonDepth} levels (each object or array is one), at most 16 KB serialized`);
