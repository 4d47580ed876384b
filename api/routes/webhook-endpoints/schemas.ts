import { z } from 'zod/v4';
import { EncryptionKeyRequiredError, keyringFor } from '../../../activities/crypto/keyring.js';
import type { Keyring } from '../../../domain/crypto/credentials.js';
import type { DeliveryRow, EndpointRow, Scope } from '../../../db/webhook-repo.js';
import { findEndpoint } from '../../../db/webhook-repo.js';
import { environments, type Environment } from '../../../domain/environment.js';
import { AppError, notFound } from '../../../domain/errors.js';
import { isId } from '../../../domain/ids.js';
import { webhookEventTypes } from '../../../domain/webhooks/event-types.js';
import type { ApiDeps } from '../../deps.js';

export const endpointSchema = z.object({
  id: z.string().describe('Webhook endpoint id, we_…'),
  url: z.string(),
  enabledEvents: z.array(z.enum(webhookEventTypes)),
  environment: z.enum(environments),
  status: z.enum(['enabled', 'disabled']),
  disabledReason: z.string().nullable().describe('Why Malipo stopped sending (410 Gone, failing for days); null while enabled'),
  disabledAt: z.string().nullable(),
  createdAt: z.string(),
});

export const deliverySchema = z.object({
  id: z.string().describe('Delivery attempt id, wd_…'),
  eventId: z.string().describe('The event id, also sent as the webhook-id header'),
  eventType: z.enum(webhookEventTypes),
  attempt: z.number().int().describe('1 for the first send of this event to this endpoint, counting manual retries'),
  status: z.enum(['succeeded', 'failed']),
  responseStatus: z.number().int().nullable().describe('HTTP status, null when no response came'),
  latencyMs: z.number().int().nullable(),
  error: z.string().nullable().describe('Why the attempt failed: timeout, refused, non-2xx, redirect…'),
  responseBody: z
    .string()
    .nullable()
    .describe('The start of the response body (at most 1,024 characters); always null for a private address allowed for test webhooks'),
  createdAt: z.string(),
});

export const endpointIdParams = z.object({ id: z.string() });

/** Row → API record by allow-list: the secrets never appear here. */
export function endpointDto(row: EndpointRow): z.infer<typeof endpointSchema> {
  return {
    id: row.id,
    url: row.url,
    enabledEvents: row.enabled_events as z.infer<typeof endpointSchema>['enabledEvents'],
    environment: row.environment,
    status: row.status,
    disabledReason: row.disabled_reason,
    disabledAt: row.disabled_at,
    createdAt: row.created_at,
  };
}

export function deliveryDto(row: DeliveryRow): z.infer<typeof deliverySchema> {
  return {
    id: row.id,
    eventId: row.event_id,
    eventType: row.event_type as z.infer<typeof deliverySchema>['eventType'],
    attempt: row.attempt,
    status: row.status,
    responseStatus: row.response_status,
    latencyMs: row.latency_ms,
    error: row.error,
    responseBody: row.response_body,
    createdAt: row.created_at,
  };
}

/** The endpoint of the key's store and environment; anything else (or a malformed id) is a 404. */
export async function ownedEndpoint(deps: ApiDeps, scope: Scope, id: string): Promise<EndpointRow> {
  const row = isId('webhookEndpoint', id) ? await findEndpoint(deps.pool, scope, id) : null;
  if (!row) throw notFound('webhook endpoint');
  return row;
}

/**
 * The keyring that encrypts signing secrets, exactly as for M-Pesa credentials: live needs
 * ENCRYPTION_KEY (403 otherwise, before anything is written); test falls back to the
 * development key in DATA_DIR.
 */
export async function secretsKeyring(deps: ApiDeps, environment: Environment): Promise<Keyring> {
  try {
    return await keyringFor(deps.config, environment);
  } catch (err) {
    if (err instanceof EncryptionKeyRequiredError) throw new AppError('live_mode_forbidden', err.message);
    throw err;
  }
}
