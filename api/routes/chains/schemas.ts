import { z } from 'zod/v4';
import { railIdSchema } from '../../rail-schema.js';

export const railRecordSchema = z
  .object({
    network: railIdSchema(),
    displayName: z.string(),
    tokenSymbol: z.string(),
    tokenStandard: z.string().optional().describe('Absent for MOBILE_MONEY'),
    chainLogoUrl: z.string(),
    tokenLogoUrl: z.string().optional().describe('Absent for MOBILE_MONEY'),
    estimatedFeeUsd: z.string().optional().describe('Decimal string; absent for MOBILE_MONEY'),
    estimatedConfirmationSeconds: z.number(),
    tagline: z.string(),
    simulatedOnly: z
      .literal(true)
      .optional()
      .describe('Test mode only: no test token is configured for this rail, so links may offer it but only simulate-payment pays it (nothing sent on its network is detected). Absent otherwise.'),
  })
  .meta({ id: 'Rail' });
