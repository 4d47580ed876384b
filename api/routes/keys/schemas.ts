import { z } from 'zod/v4';
import { maxRollGraceHours } from '../../../domain/api-keys.js';

export const keyIdParams = z.object({ id: z.string().describe('API key id, key_…') });

const graceMessage = `must be a number of hours from 0 to ${maxRollGraceHours}, the time the old key keeps working (0 stops it now; the default is 24)`;

/** Body schemas shared by the API routes and the dashboard forms, so both give the same message. */
export const createKeyBody = z.strictObject({
  kind: z
    .enum(['secret', 'publishable'], { error: 'must be "secret" or "publishable"' })
    .optional()
    .describe('secret (the default) or publishable'),
  name: z
    .string({ error: 'must be a string of 1 to 100 characters' })
    .trim()
    .min(1, { error: 'must be a string of 1 to 100 characters' })
    .max(100, { error: 'must be a string of 1 to 100 characters' })
    .optional()
    .describe('A label to tell keys apart, such as the server that uses it')
    .meta({ example: 'checkout server' }),
});

export const rollKeyBody = z.strictObject({
  graceHours: z
    .number({ error: graceMessage })
    .min(0, { error: graceMessage })
    .max(maxRollGraceHours, { error: graceMessage })
    .optional()
    .describe(`Hours the old key keeps working next to the new one, 0 to ${maxRollGraceHours}; fractions are fine. Default 24`)
    .meta({ example: 24 }),
});

export const revokeKeyBody = z.strictObject({
  confirmSelfRevoke: z
    .boolean({ error: 'must be true or false' })
    .optional()
    .describe('Must be true to revoke the key that makes this request'),
});
