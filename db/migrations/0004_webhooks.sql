-- Webhook endpoints and the log of every delivery attempt.
-- The signing secret has to be usable to compute HMACs, so it cannot be hashed like an API key.
-- It is stored as issued and never returned after creation (nor logged); `previous_secret`
-- keeps signing next to a rolled secret until `previous_secret_expires_at`.
CREATE TABLE webhook_endpoints (
  id                          text PRIMARY KEY,
  store_id                    text NOT NULL REFERENCES stores(id) ON DELETE CASCADE,
  environment                 text NOT NULL CHECK (environment IN ('test', 'live')),
  url                         text NOT NULL,
  enabled_events              text[] NOT NULL CHECK (cardinality(enabled_events) > 0),
  secret                      text NOT NULL,
  previous_secret             text,
  previous_secret_expires_at  timestamptz,
  status                      text NOT NULL DEFAULT 'enabled' CHECK (status IN ('enabled', 'disabled')),
  disabled_reason             text,
  disabled_at                 timestamptz,
  created_at                  timestamptz NOT NULL DEFAULT now(),
  CHECK ((status = 'disabled') = (disabled_reason IS NOT NULL))
);
CREATE INDEX webhook_endpoints_store_idx ON webhook_endpoints (store_id, environment, created_at DESC);

-- One row per attempt. `id` is chosen before the attempt is made (by the delivery workflow or
-- the retry request), so a retried activity rewrites its own row instead of adding one.
-- `attempt` counts the sends of this event to this endpoint, automatic and manual together.
CREATE TABLE webhook_deliveries (
  id               text PRIMARY KEY,
  endpoint_id      text NOT NULL REFERENCES webhook_endpoints(id) ON DELETE CASCADE,
  event_id         text NOT NULL REFERENCES events(id) ON DELETE CASCADE,
  attempt          integer NOT NULL CHECK (attempt >= 1),
  trigger          text NOT NULL CHECK (trigger IN ('automatic', 'manual')),
  status           text NOT NULL CHECK (status IN ('succeeded', 'failed')),
  response_status  integer,
  latency_ms       integer,
  response_body    text,
  error            text,
  created_at       timestamptz NOT NULL DEFAULT now(),
  UNIQUE (endpoint_id, event_id, attempt)
);
CREATE INDEX webhook_deliveries_endpoint_idx ON webhook_deliveries (endpoint_id, created_at DESC, id DESC);
CREATE INDEX webhook_deliveries_success_idx ON webhook_deliveries (endpoint_id, created_at) WHERE status = 'succeeded';
