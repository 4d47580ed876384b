/** The events a webhook endpoint can subscribe to (DESIGN.md, "Webhooks"). */
export const webhookEventTypes = ['payment_link.confirmed', 'transfer.confirmed', 'invoice.paid'] as const;
export type WebhookEventType = (typeof webhookEventTypes)[number];

/** Endpoints created without `enabledEvents` receive every event type. */
export const defaultEnabledEvents: readonly WebhookEventType[] = webhookEventTypes;
