import { z } from 'zod/v4';
import { keyStates, type KeyRow } from '../../db/api-key-repo.js';
import { keyDisplayPrefix } from '../../domain/api-keys.js';
import { environments } from '../../domain/environment.js';

/**
 * An API key as the API, the CLI and the dashboard show it: by prefix and last four characters.
 * The mapper is an allow-list, so the hash never leaves the database and a secret key is shown
 * whole only in the answer that issued it (`key`, added by the create and roll operations).
 */
export const apiKeySchema = z.object({
  id: z.string().describe('API key id, key_…'),
  kind: z.enum(['secret', 'publishable']),
  environment: z.enum(environments),
  name: z.string().nullable().describe('A label of your choosing; a rolled key passes it on'),
  prefix: z.string().describe('How the key starts: sk_test_, sk_live_, pk_test_ or pk_live_').meta({ example: 'sk_test_' }),
  last4: z.string().describe('The last four characters of the key').meta({ example: 'x7k2' }),
  publishableKey: z.string().nullable().describe('The whole publishable key, which is public by design; null for a secret key'),
  status: z.enum(keyStates).describe('active; expiring: rolled, works until expiresAt; expired: rolled, grace period over; revoked'),
  createdAt: z.string(),
  lastUsedAt: z.string().nullable().describe('When the key last authenticated a request, to within a minute; null if never'),
  expiresAt: z.string().nullable().describe('End of the grace period after a roll; null for a key that was not rolled'),
  revokedAt: z.string().nullable(),
  replacedBy: z.string().nullable().describe('The key a roll issued in place of this one'),
});
export type ApiKeyDto = z.infer<typeof apiKeySchema>;

export const createdApiKeySchema = apiKeySchema.extend({
  key: z.string().describe('The whole key. A secret key is shown here once and never again: Malipo keeps only its hash'),
});

export const rolledApiKeySchema = createdApiKeySchema.extend({
  previousKey: apiKeySchema.describe('The rolled key: it works until its expiresAt, then it is refused'),
});

export function apiKeyDto(row: KeyRow, keyPrefix: string): ApiKeyDto {
  return {
    id: row.id,
    kind: row.kind,
    environment: row.environment,
    name: row.name,
    prefix: keyDisplayPrefix(row.kind, keyPrefix, row.environment),
    last4: row.last4,
    publishableKey: row.kind === 'publishable' ? row.publishable_key : null,
    status: row.state,
    createdAt: row.created_at,
    lastUsedAt: row.last_used_at,
    expiresAt: row.expires_at,
    revokedAt: row.revoked_at,
    replacedBy: row.replaced_by,
  };
}
