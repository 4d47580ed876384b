-- The id that follows one payment across the API log, the worker log, the trace and the Temporal
-- UI (docs/tracing.md): the id of the request that created the link or invoice. Kept with the row
-- because the workflow may be started long after that request (worker/request-starter.ts), and
-- its start puts the id in the workflow's memo. Rows from before this migration have none.
ALTER TABLE payment_links ADD COLUMN IF NOT EXISTS correlation_id text;
