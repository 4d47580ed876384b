-- Links found by the merchant's own reference (GET /v1/payment-links?merchantRef=…, the
-- dashboard's search): the store's links with that reference, newest first, from the index alone
-- instead of every link of the store. Partial: most links of many stores carry no reference.
CREATE INDEX payment_links_merchant_ref_idx ON payment_links (store_id, environment, kind, merchant_ref, created_at DESC, id DESC)
  WHERE merchant_ref IS NOT NULL;

-- A link's detail page lists the webhook attempts of its event; deliveries were indexed only by
-- endpoint. Plain CREATE INDEX (migrations run in a transaction): it holds writes to the table
-- while it builds, a few seconds per million rows.
CREATE INDEX webhook_deliveries_event_idx ON webhook_deliveries (event_id, created_at);
