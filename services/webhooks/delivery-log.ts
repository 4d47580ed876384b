import { serializeEvent } from './event-payload.js';
import { findStoreEvents } from '../../db/event-repo.js';
import type { ServiceDeps } from '../deps.js';
import type { StoreScope } from '../scope.js';
import type { DeliveryDto } from './dto.js';

/**
 * The bodies the log's deliveries carried, by event id: the event's stored payload serialized
 * exactly as every attempt of it sent it (`serializeEvent`, the bytes that were signed). Only the
 * scope's own events are read.
 */
export async function deliveredBodies(
  deps: Pick<ServiceDeps, 'pool'>,
  scope: StoreScope,
  deliveries: readonly DeliveryDto[],
): Promise<Map<string, string>> {
  const ids = [...new Set(deliveries.map((d) => d.eventId))];
  const events = await findStoreEvents(deps.pool, scope, ids);
  return new Map(events.map((e) => [e.id, serializeEvent(e.payload)]));
}
