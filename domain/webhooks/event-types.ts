/** The events a webhook endpoint can subscribe to (DESIGN.md, "Webhooks"; docs/webhooks.md). */
export const webhookEventTypes = [
  'payment_link.confirmed',
  'transfer.confirmed',
  'invoice.paid',
  'reconciliation.mismatch',
  'webhook_endpoint.disabled',
  'webhook_delivery.exhausted',
  'mobile_money.unallocated',
  'sweep.completed',
  'sweep.failed',
] as const;
export type WebhookEventType = (typeof webhookEventTypes)[number];

/**
 * Events about the store's own webhook endpoints, sent to its other endpoints: Malipo disabled
 * one, or a delivery ran out of attempts. A failure to deliver one of these raises no other.
 */
export const endpointNoticeTypes = ['webhook_endpoint.disabled', 'webhook_delivery.exhausted'] as const;
export type EndpointNoticeType = (typeof endpointNoticeTypes)[number];

export function isEndpointNotice(type: string): type is EndpointNoticeType {
  return (endpointNoticeTypes as readonly string[]).includes(type);
}

/**
 * Endpoints created without `enabledEvents` receive every event type there is when they are
 * created. The list is stored with the endpoint: a type added later reaches an endpoint only once
 * its `enabledEvents` is updated to name it.
 */
export const defaultEnabledEvents: readonly WebhookEventType[] = webhookEventTypes;

/**
 * The event a merchant asks for to check one endpoint (`POST /v1/webhook-endpoints/:id/test`).
 * Nobody subscribes to it: it goes to the endpoint it was asked for, and only there.
 */
export const testEventType = 'webhook_endpoint.tested';

/** Every type a delivery in the log can carry: the subscribable ones and the test event. */
export const deliveredEventTypes = [...webhookEventTypes, testEventType] as const;
export type DeliveredEventType = (typeof deliveredEventTypes)[number];
