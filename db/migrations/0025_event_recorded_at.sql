-- The outbox sweep picks undispatched events by when their row was written (`recorded_at`, added by
-- 0019), no longer by `created_at`: that is the event's business time (a confirmation's time, an
-- M-Pesa TransactionDate, a deposit's), which can be hours old at the moment the row is written, so
-- a fresh event was swept while its own first dispatch was still running. The column exists and is
-- NOT NULL DEFAULT now() since 0019, which counted rows already there as recorded then; they keep
-- that value (moving it back to `created_at` would also shrink who they fan out to). Only the
-- sweep's partial index follows it to the new column.
DROP INDEX IF EXISTS events_undispatched_idx;
CREATE INDEX events_undispatched_idx ON events (recorded_at) WHERE dispatched_at IS NULL;
