/** The events a webhook endpoint can subscribe to (DESIGN.md, "Webhooks"). */
export const webhookEventTypes = ['payment_link.confirmed', 'transfer.confirmed', 'invoice.paid', 'reconciliation.mismatch'] as const;
export type WebhookEventType = (typeof webhookEventTypes)[number];

/** Endpoints created without `enabledEvents` receive every event type. */
export const defaultEnabledEvents: readonly WebhookEventType[] = webhookEventTypes;

/**
 * The event a merchant asks for to check one endpoint (`POST /v1/webhook-endpoints/:id/test`).
 * Nobody subscribes to it: it goes to the endpoint it was asked for, and only there.
 */
export const testEventType = 'webhook_endpoint.tested';

/** Every type a delivery in the log can carry: the subscribable ones and the test event. */
export const deliveredEventTypes = [...webhookEventTypes, testEventType] as const;
export type DeliveredEventType = (typeof deliveredEventTypes)[number];
