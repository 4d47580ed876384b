import { createHash } from 'node:crypto';
import { setTimeout as sleep } from 'node:timers/promises';
import { insertDirectedEvent } from '../../db/event-repo.js';
import { findFirstDelivery } from '../../db/webhook-repo.js';
import type { Environment } from '../../domain/environment.js';
import { AppError } from '../../domain/errors.js';
import { idPrefixes, isId } from '../../domain/ids.js';
import { testEventType } from '../../domain/webhooks/event-types.js';
import { startDelivery, targetOf } from '../../temporal-client/index.js';
import type { ServiceDeps } from '../deps.js';
import type { StoreScope } from '../scope.js';
import { deliveryDto, type DeliveryDto } from './dto.js';
import { ownedEndpoint } from './endpoints.js';

/**
 * "Send a test event": a `webhook_endpoint.tested` event for one endpoint, delivered by the same
 * workflow as every other event (signed, on the retry schedule, logged). It is written to the
 * outbox already marked dispatched and nobody can subscribe to its type, so the fan-out and the
 * sweeper never send it anywhere else. The event id is chosen by the caller, so repeating a
 * request (an Idempotency-Key replay, a form sent twice) finds the same event, and the delivery
 * workflow's id (`webhook-delivery/<eventId>/<endpointId>`) refuses a second start.
 */
type Deps = Pick<ServiceDeps, 'pool' | 'config' | 'temporal'>;

export const testEventMessage = 'A test event, sent on request to check this endpoint. It is about no payment: answer 2xx.';

/** How long the answer waits for the first attempt (which itself has 10 s) before answering without it. */
const firstAttemptWithinMs = 15_000;

export interface TestEventResult {
  event: { id: string; type: typeof testEventType; createdAt: string; environment: Environment; data: TestEventData };
  /** The first attempt, when it finished in time; later attempts (if it failed) show in the delivery log. */
  firstAttempt: DeliveryDto | null;
}

export interface TestEventData {
  endpointId: string;
  url: string;
  message: string;
}

export async function sendTestEvent(deps: Deps, scope: StoreScope, endpointId: string, eventId: string): Promise<TestEventResult> {
  const endpoint = await ownedEndpoint(deps, scope, endpointId);
  if (endpoint.status !== 'enabled') {
    throw new AppError('invalid_state', `The endpoint is disabled (${endpoint.disabled_reason}). Enable it first.`);
  }
  if (!isId('event', eventId)) throw new Error(`a test event id must be an event id, not ${eventId}`);
  const data: TestEventData = { endpointId: endpoint.id, url: endpoint.url, message: testEventMessage };
  const event = await insertDirectedEvent(deps.pool, {
    id: eventId, storeId: scope.storeId, environment: scope.environment, type: testEventType, data, createdAt: new Date().toISOString(),
  });
  const stored = event.payload.data as Partial<TestEventData>;
  if (event.storeId !== scope.storeId || event.environment !== scope.environment || event.type !== testEventType || stored.endpointId !== endpoint.id) {
    throw new AppError('invalid_state', 'This request already sent a test event to another endpoint; send a new request.');
  }
  await startDelivery(targetOf(deps), event, endpoint.id, deps.config.webhooks.retryScale);
  return { event: event.payload as TestEventResult['event'], firstAttempt: await firstAttempt(deps, endpoint.id, event.id) };
}

async function firstAttempt(deps: Deps, endpointId: string, eventId: string): Promise<DeliveryDto | null> {
  const deadline = Date.now() + firstAttemptWithinMs;
  for (;;) {
    const row = await findFirstDelivery(deps.pool, endpointId, eventId);
    if (row) return deliveryDto(row);
    if (Date.now() > deadline) return null;
    await sleep(100);
  }
}

const alphabet = '0123456789abcdefghijklmnopqrstuvwxyz';

/**
 * The event id of a dashboard form's test request: derived from the store, the environment, the
 * endpoint and the form's random nonce, so sending the same form twice sends one event, and no
 * nonce can name another store's event.
 */
export function testEventIdFor(scope: StoreScope, endpointId: string, nonce: string): string {
  const digest = createHash('sha256').update(`${scope.storeId}\n${scope.environment}\n${endpointId}\n${nonce}`).digest();
  let out = '';
  for (let i = 0; i < 24; i++) out += alphabet[digest[i]! % 36];
  return `${idPrefixes.event}_${out}`;
}
