import { openDeliveryExhaustions } from '../../db/event-repo.js';
import type { DeliveryExhaustedData } from '../../domain/webhooks/endpoint-notices.js';
import type { ServiceDeps } from '../deps.js';
import type { StoreScope } from '../scope.js';

/** How many exhausted deliveries the dashboard lists at most. */
const listed = 20;

/**
 * Deliveries of the scope that ran out of attempts and whose event has not reached its endpoint
 * since (each a `webhook_delivery.exhausted` event's data), newest first: what the dashboard's
 * webhooks page asks the merchant to look at and send again.
 */
export async function listOpenExhaustedDeliveries(deps: Pick<ServiceDeps, 'pool'>, scope: StoreScope): Promise<DeliveryExhaustedData[]> {
  const events = await openDeliveryExhaustions(deps.pool, scope, listed);
  return events.map((e) => e.payload.data as DeliveryExhaustedData);
}
