/**
 * The `data` of the events Malipo raises about a store's own webhook endpoints (docs/webhooks.md).
 * They name the endpoint by id and URL (the merchant's own; URLs carry no credentials, see
 * url-policy.ts) and the event whose delivery failed; the last error is the delivery log's, which
 * holds an HTTP status or our own words, never a secret.
 */
export interface EndpointDisabledData {
  endpointId: string;
  url: string;
  /** `gone`: it answered 410; `failing`: a delivery ran out of attempts and nothing reached it meanwhile. */
  reason: 'gone' | 'failing';
  /** The reason as the endpoint now shows it (`disabledReason`). */
  description: string;
  disabledAt: string;
  /** The event whose delivery disabled it. */
  eventId: string;
  eventType: string;
  /** Attempts of that event at the endpoint. */
  attempts: number;
  lastError: string | null;
  firstAttemptAt: string | null;
}

export interface DeliveryExhaustedData {
  endpointId: string;
  url: string;
  eventId: string;
  eventType: string;
  attempts: number;
  lastError: string | null;
  /** The last attempt in the delivery log: `POST /v1/webhook-endpoints/:id/deliveries/:deliveryId/retry` sends the event again. */
  lastDeliveryId: string | null;
  firstAttemptAt: string | null;
  lastAttemptAt: string | null;
  /** Whether Malipo disabled the endpoint for it (then a `webhook_endpoint.disabled` follows). */
  endpointDisabled: boolean;
}
