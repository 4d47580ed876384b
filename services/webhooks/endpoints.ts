import {
  countEndpoints,
  deleteEndpoint,
  enableEndpoint,
  findDeliveryById,
  findEndpoint,
  insertEndpoint,
  listDeliveries,
  listEndpoints,
  rollEndpointSecret,
  type EndpointRow,
} from '../../db/webhook-repo.js';
import type { Keyring } from '../../domain/crypto/credentials.js';
import type { Environment } from '../../domain/environment.js';
import { AppError, notFound } from '../../domain/errors.js';
import { isId, newId } from '../../domain/ids.js';
import { defaultEnabledEvents, type WebhookEventType } from '../../domain/webhooks/event-types.js';
import { generateWebhookSecret } from '../../domain/webhooks/signing.js';
import { ensureOutboxSweeper, runManualDelivery, targetOf } from '../../temporal-client/index.js';
import type { ServiceDeps } from '../deps.js';
import { secretsKeyring } from '../keyring.js';
import type { StoreScope } from '../scope.js';
import { resolveDestination } from './destination.js';
import { deliveryDto, endpointDto, type DeliveryDto, type EndpointDto } from './dto.js';
import { encryptWebhookSecret, protectStoredSecret } from './secrets.js';

/** Per store and environment; enough for fan-out to several systems, bounded for the worker. */
export const maxEndpointsPerStore = 50;
/** How long the old secret keeps signing next to the new one: time to deploy the new secret. */
export const secretOverlapSeconds = 24 * 3600;
/** A manual attempt takes at most 10 s; past this the webhooks workers are down or saturated. */
const manualAnswerWithinMs = 25_000;
/** How often the outbox sweeper looks (scaled like every webhook timer, but never below a second). */
export const sweepIntervalMs = 30_000;

type Deps = Pick<ServiceDeps, 'pool' | 'config' | 'temporal' | 'logger'>;

/** Starts the outbox sweeper unless it runs already. Safe to call from every process at boot. */
export function ensureWebhookSweeper(deps: Pick<ServiceDeps, 'temporal' | 'config'>): Promise<void> {
  return ensureOutboxSweeper(targetOf(deps), Math.max(1000, Math.round(sweepIntervalMs * deps.config.webhooks.retryScale)));
}

/**
 * Registers an endpoint (the API and the dashboard both come here): the URL policy, the
 * per-store limit, then a fresh `whsec_` secret stored only as a ciphertext bound to the
 * endpoint's id. The plaintext secret is in the answer and nowhere else.
 */
export async function registerWebhookEndpoint(
  deps: Deps,
  scope: StoreScope,
  input: { url: string; enabledEvents?: readonly WebhookEventType[] },
): Promise<EndpointDto & { secret: string }> {
  const dest = await resolveDestination(input.url, scope.environment, deps.config.webhooks);
  let url: URL;
  if (dest.ok) url = dest.url;
  // A test URL whose host does not resolve yet (a tunnel not started) is accepted: every delivery checks it again.
  else if (scope.environment === 'test' && dest.unresolvedUrl) url = dest.unresolvedUrl;
  else throw new AppError('invalid_field', `Invalid 'url': it ${dest.message}.`, 'url');
  if ((await countEndpoints(deps.pool, scope)) >= maxEndpointsPerStore) {
    throw new AppError('invalid_state', `A store can have at most ${maxEndpointsPerStore} webhook endpoints per environment; delete one first.`);
  }
  // Live needs ENCRYPTION_KEY (403 otherwise), checked before anything is written.
  const keyring = await secretsKeyring(deps.config, scope.environment);
  // The ciphertext is bound to the endpoint id, so the id is chosen before the insert.
  const id = newId('webhookEndpoint');
  const secret = generateWebhookSecret();
  const stored = encryptWebhookSecret(keyring, { storeId: scope.storeId, environment: scope.environment, endpointId: id }, secret);
  const row = await insertEndpoint(deps.pool, { ...scope, id, url: url.href, enabledEvents: input.enabledEvents ?? defaultEnabledEvents, secret: stored });
  // The outbox safety net must run wherever endpoints exist; starting it is a no-op when it does.
  await ensureWebhookSweeper(deps).catch((err) => deps.logger?.warn({ err }, 'could not start the webhook outbox sweeper'));
  return { ...endpointDto(row), secret };
}

/**
 * Issues a new secret for an endpoint of the scope. The current ciphertext moves to
 * `previous_secret` as it is (same slot); a legacy plaintext secret is encrypted on the way.
 * Nothing is decrypted.
 */
export async function rollWebhookSecret(
  deps: Deps,
  scope: StoreScope,
  endpointId: string,
): Promise<{ id: string; secret: string; previousSecretExpiresAt: string }> {
  const row = await ownedEndpoint(deps, scope, endpointId);
  const keyring = await secretsKeyring(deps.config, scope.environment);
  const ref = { storeId: scope.storeId, environment: scope.environment, endpointId: row.id };
  const secret = generateWebhookSecret();
  const rolled = await rollEndpointSecret(deps.pool, scope, row.id, encryptWebhookSecret(keyring, ref, secret), secretOverlapSeconds, (stored) =>
    protectStoredSecret(keyring, ref, stored),
  );
  if (!rolled) throw notFound('webhook endpoint');
  return { id: rolled.id, secret, previousSecretExpiresAt: rolled.previous_secret_expires_at! };
}

/** The store's endpoints in its environment, newest first. */
export async function listWebhookEndpoints(deps: Pick<ServiceDeps, 'pool'>, scope: StoreScope): Promise<EndpointDto[]> {
  return (await listEndpoints(deps.pool, scope)).map(endpointDto);
}

export async function getWebhookEndpoint(deps: Pick<ServiceDeps, 'pool'>, scope: StoreScope, id: string): Promise<EndpointDto> {
  return endpointDto(await ownedEndpoint(deps, scope, id));
}

/** Deletes an endpoint: deliveries in progress stop at their next attempt. */
export async function deleteWebhookEndpoint(deps: Pick<ServiceDeps, 'pool'>, scope: StoreScope, id: string): Promise<{ id: string; deleted: true }> {
  const row = await ownedEndpoint(deps, scope, id);
  if (!(await deleteEndpoint(deps.pool, scope, row.id))) throw notFound('webhook endpoint');
  return { id: row.id, deleted: true };
}

/** Enables a disabled endpoint again (new events only). */
export async function enableWebhookEndpoint(deps: Pick<ServiceDeps, 'pool'>, scope: StoreScope, id: string): Promise<EndpointDto> {
  const row = await ownedEndpoint(deps, scope, id);
  const enabled = await enableEndpoint(deps.pool, scope, row.id);
  if (!enabled) throw notFound('webhook endpoint');
  return endpointDto(enabled);
}

/** The endpoint's latest delivery attempts, newest first. */
export async function listEndpointDeliveries(deps: Pick<ServiceDeps, 'pool'>, scope: StoreScope, id: string, limit: number): Promise<DeliveryDto[]> {
  const endpoint = await ownedEndpoint(deps, scope, id);
  return (await listDeliveries(deps.pool, endpoint.id, limit)).map(deliveryDto);
}

/** Sends a delivery's event to its endpoint again now (one attempt, Temporal work like any other); answers with the new attempt. */
export async function retryWebhookDelivery(deps: Deps, scope: StoreScope, endpointId: string, deliveryId: string): Promise<DeliveryDto> {
  const endpoint = await ownedEndpoint(deps, scope, endpointId);
  const original = isId('webhookDelivery', deliveryId) ? await findDeliveryById(deps.pool, deliveryId) : null;
  if (!original || original.endpoint_id !== endpoint.id) throw notFound('delivery');
  if (endpoint.status !== 'enabled') {
    throw new AppError('invalid_state', `The endpoint is disabled (${endpoint.disabled_reason}). Enable it first.`);
  }
  const newDeliveryId = newId('webhookDelivery');
  const event = { id: original.event_id, storeId: scope.storeId, environment: scope.environment };
  const result = await withDeadline(runManualDelivery(targetOf(deps), event, endpoint.id, newDeliveryId), manualAnswerWithinMs);
  const row = await findDeliveryById(deps.pool, newDeliveryId);
  if (!row) throw new AppError('invalid_state', `The endpoint was deleted or disabled before the attempt (${result.outcome}).`);
  return deliveryDto(row);
}

/** The endpoint of the scope's store and environment; anything else (or a malformed id) is a 404. */
export async function ownedEndpoint(deps: Pick<ServiceDeps, 'pool'>, scope: StoreScope, id: string): Promise<EndpointRow> {
  const row = isId('webhookEndpoint', id) ? await findEndpoint(deps.pool, scope, id) : null;
  if (!row) throw notFound('webhook endpoint');
  return row;
}

async function withDeadline<T>(work: Promise<T>, ms: number): Promise<T> {
  let timer: NodeJS.Timeout | undefined;
  const late = new Promise<never>((_, reject) => {
    timer = setTimeout(() => reject(new AppError('upstream_unavailable',
      'The attempt is queued but did not finish in time (the webhook workers may be busy); it will run, and the delivery log will show it.')), ms);
  });
  try {
    return await Promise.race([work, late]);
  } finally {
    clearTimeout(timer);
  }
}
