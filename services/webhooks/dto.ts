import type { DeliveryRow, EndpointRow } from '../../db/webhook-repo.js';
import type { Environment } from '../../domain/environment.js';
import type { DeliveredEventType, WebhookEventType } from '../../domain/webhooks/event-types.js';

/** A webhook endpoint as merchants see it: never its secrets. */
export interface EndpointDto {
  id: string;
  url: string;
  enabledEvents: WebhookEventType[];
  environment: Environment;
  status: 'enabled' | 'disabled';
  disabledReason: string | null;
  disabledAt: string | null;
  createdAt: string;
}

/** One delivery attempt in the endpoint's log. */
export interface DeliveryDto {
  id: string;
  eventId: string;
  eventType: DeliveredEventType;
  attempt: number;
  status: 'succeeded' | 'failed';
  responseStatus: number | null;
  latencyMs: number | null;
  error: string | null;
  responseBody: string | null;
  createdAt: string;
}

/** Row → record by allow-list: the secrets never appear here. */
export function endpointDto(row: EndpointRow): EndpointDto {
  return {
    id: row.id,
    url: row.url,
    enabledEvents: row.enabled_events as WebhookEventType[],
    environment: row.environment,
    status: row.status,
    disabledReason: row.disabled_reason,
    disabledAt: row.disabled_at,
    createdAt: row.created_at,
  };
}

export function deliveryDto(row: DeliveryRow): DeliveryDto {
  return {
    id: row.id,
    eventId: row.event_id,
    eventType: row.event_type as DeliveredEventType,
    attempt: row.attempt,
    status: row.status,
    responseStatus: row.response_status,
    latencyMs: row.latency_ms,
    error: row.error,
    responseBody: row.response_body,
    createdAt: row.created_at,
  };
}
