-- The ledger knows sweeps (issue 30 item 4). A broadcast sweep plan has a state, and each of its
-- signed transactions is a row here: the token transfer out of a source (amount in the token's
-- smallest unit) and each gas top-up into one (amount in the native coin's smallest unit), with its
-- hash and its state (broadcast, mined, final at the rail's confirmation depth, or failed).
-- Sweeps are never deposits or payments: the reconciler subtracts a source's mined or final
-- transfers from what it expects the address to hold.
ALTER TABLE sweep_plans
  ADD COLUMN state       text CHECK (state IN ('broadcast', 'mined', 'final', 'failed')),
  ADD COLUMN finished_at timestamptz;

CREATE TABLE sweep_transactions (
  plan_id        text NOT NULL REFERENCES sweep_plans(id) ON DELETE CASCADE,
  seq            integer NOT NULL,                  -- its place in the plan's transactions
  store_id       text NOT NULL,
  environment    text NOT NULL CHECK (environment IN ('test', 'live')),
  rail           text NOT NULL,
  kind           text NOT NULL CHECK (kind IN ('top_up', 'transfer')),
  source_address text NOT NULL,                     -- the swept address (a top-up's recipient, a transfer's sender)
  from_address   text NOT NULL,
  to_address     text NOT NULL,                     -- a transfer's: the destination (not the token contract)
  amount_minor   numeric(78, 0) NOT NULL CHECK (amount_minor >= 0),
  tx_hash        text NOT NULL,
  state          text NOT NULL CHECK (state IN ('broadcast', 'mined', 'final', 'failed')),
  block_number   bigint,
  created_at     timestamptz NOT NULL DEFAULT now(),
  updated_at     timestamptz NOT NULL DEFAULT now(),
  PRIMARY KEY (plan_id, seq)
);
CREATE INDEX sweep_transactions_source_idx ON sweep_transactions (rail, environment, lower(source_address)) WHERE kind = 'transfer';
CREATE INDEX sweep_plans_following_idx ON sweep_plans (state) WHERE state IN ('broadcast', 'mined');

-- New webhook events `sweep.completed` and `sweep.failed`: an endpoint that took every type there
-- was keeps taking every type (as 0029 and 0034 did).
UPDATE webhook_endpoints
SET enabled_events = enabled_events || ARRAY(
  SELECT t FROM unnest(ARRAY['sweep.completed', 'sweep.failed']::text[]) AS t WHERE NOT t = ANY (enabled_events)
)
WHERE enabled_events @> ARRAY['payment_link.confirmed', 'transfer.confirmed', 'invoice.paid', 'reconciliation.mismatch',
  'webhook_endpoint.disabled', 'webhook_delivery.exhausted', 'mobile_money.unallocated']::text[];
