-- M-Pesa unallocated payments (issue 29, item 6), after 0031_mpesa_c2b.sql shipped.
--
-- An unallocated payment assigned to a link by hand: who (the API key `key:<id>` or the dashboard
-- user `user:<id>`) and when.
ALTER TABLE mpesa_c2b_payments
  ADD COLUMN assigned_by text,
  ADD COLUMN assigned_at timestamptz;

-- A new webhook event, `mobile_money.unallocated`: an endpoint that took every type there was
-- takes it too (as migration 0029 did); one that chose some keeps its choice.
UPDATE webhook_endpoints
SET enabled_events = enabled_events || ARRAY['mobile_money.unallocated']::text[]
WHERE enabled_events @> ARRAY['payment_link.confirmed', 'transfer.confirmed', 'invoice.paid', 'reconciliation.mismatch',
                              'webhook_endpoint.disabled', 'webhook_delivery.exhausted']::text[]
  AND NOT 'mobile_money.unallocated' = ANY (enabled_events);
