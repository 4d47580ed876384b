import type { StoredEvent } from '../../db/event-repo.js';

/** The exact bytes sent and signed; the payload's own key order is fixed here for readability. */
export function serializeEvent(p: StoredEvent['payload']): string {
  return JSON.stringify({ id: p.id, type: p.type, createdAt: p.createdAt, environment: p.environment, data: p.data });
}
