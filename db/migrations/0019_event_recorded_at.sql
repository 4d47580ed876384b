-- When the outbox row was written, by the database's clock. An event fans out only to endpoints
-- created by then: a dispatch held back (a worker roll, the minute-late outbox sweep) must not hand
-- an endpoint added meanwhile what happened before it existed. `created_at` stays the event's own
-- business time (a confirmation's time), which the payload carries. Rows already here count as
-- recorded now, so their pending dispatches still reach every endpoint that exists today.
ALTER TABLE events ADD COLUMN recorded_at timestamptz NOT NULL DEFAULT now();
