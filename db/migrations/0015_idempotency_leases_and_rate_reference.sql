-- Idempotency keys survive a crash (docs/idempotency.md).
-- A claim is a lease: `locked_until` is renewed while the request runs, and a retry may take over
-- a claim whose lease ran out (the process died). `lock_token` says which attempt holds it, so a
-- stalled attempt can neither record nor release a claim another attempt took over.
-- `created_ids` holds the ids of the objects the request creates, reserved before they are
-- created: a retry after a crash completes the same object instead of creating a second one.
ALTER TABLE idempotency_keys
  ADD COLUMN locked_until timestamptz,
  ADD COLUMN lock_token   text,
  ADD COLUMN created_ids  jsonb NOT NULL DEFAULT '{}'::jsonb;

-- A 400 is a request refused before anything ran: it no longer binds its key, so the corrected
-- request may use the same key. Records of 400s stored before this migration are forgotten.
DELETE FROM idempotency_keys WHERE status_code = 400;

-- The last live USDT/KES rate that passed every check (docs/rates.md), shared by every API
-- process and kept across restarts: a new rate too far from it is refused, and it is served
-- while it is young enough when no trustworthy rate can be read.
CREATE TABLE kes_rate_reference (
  singleton     boolean PRIMARY KEY DEFAULT true CHECK (singleton),
  kes_per_usdt  numeric(20, 6) NOT NULL CHECK (kes_per_usdt > 0),
  source        text NOT NULL,
  fetched_at    timestamptz NOT NULL
);
