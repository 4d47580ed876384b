-- An endpoint that took every event type there was (the default when created without
-- `enabledEvents`, or all of them chosen by hand) keeps taking every type: the types added since
-- (`reconciliation.mismatch`, `webhook_endpoint.disabled`, `webhook_delivery.exhausted`) are added
-- to it. An endpoint that chose some types keeps exactly its choice.
UPDATE webhook_endpoints
SET enabled_events = enabled_events || ARRAY(
  SELECT t FROM unnest(ARRAY['reconciliation.mismatch', 'webhook_endpoint.disabled', 'webhook_delivery.exhausted']::text[]) AS t
  WHERE NOT t = ANY (enabled_events)
)
WHERE enabled_events @> ARRAY['payment_link.confirmed', 'transfer.confirmed', 'invoice.paid']::text[];
