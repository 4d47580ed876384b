-- Events about a store's own webhook endpoints (`webhook_endpoint.disabled`,
-- `webhook_delivery.exhausted`) name the endpoint they are about: the fan-out sends them to the
-- store's other endpoints, never to that one (it is failing; it would only fail again).
ALTER TABLE events ADD COLUMN about_endpoint_id text;

-- The dashboard's webhooks page lists a store's recent exhausted deliveries from these events.
CREATE INDEX events_delivery_exhausted_idx ON events (store_id, environment, created_at DESC)
  WHERE type = 'webhook_delivery.exhausted';
