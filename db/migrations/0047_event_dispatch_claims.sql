-- The outbox relay (activities/webhooks/relay.ts) claims undispatched events before fanning them
-- out, so that two dispatchers (two relays, a relay and a caller's own dispatch, the sweeper) never
-- send one event's first attempts at the same time. A claim is a lease: it lapses on its own when
-- the process holding it dies, and the event is claimed again then. NULL: never claimed.
-- The claim query reads the sweep's partial index (events_undispatched_idx, on recorded_at WHERE
-- dispatched_at IS NULL), which stays small: only events not yet dispatched are in it.
ALTER TABLE events ADD COLUMN dispatch_claimed_until timestamptz;
-- Where an event was written from, for the dispatcher that sends it from another process (the
-- relay): the correlation id of the request that led to it and the W3C trace context of the
-- activity that wrote it (`traceparent`, `tracestate`), so that its webhook attempts log that
-- correlation id and their spans join the payment's trace. No secret: ids only. NULL: none known.
ALTER TABLE events ADD COLUMN origin jsonb;
