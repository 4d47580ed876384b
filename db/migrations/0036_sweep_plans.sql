-- Sweep plans (issue 30 item 2): kept apart from 0033, which had shipped before this table.
-- Sweep plans as answered (unsigned transactions, their nonces and fee caps, the sources and the
-- cost), kept for the offline signer's output to be checked against, until `expires_at`.
CREATE TABLE sweep_plans (
  id           text PRIMARY KEY,                        -- swp_…
  store_id     text NOT NULL REFERENCES stores(id) ON DELETE CASCADE,
  environment  text NOT NULL CHECK (environment IN ('test', 'live')),
  rail         text NOT NULL,
  destination  text NOT NULL,
  plan         jsonb NOT NULL,
  created_at   timestamptz NOT NULL DEFAULT now(),
  expires_at   timestamptz NOT NULL,
  broadcast_at timestamptz                              -- set once, when a broadcast of it began: a replay is refused
);
CREATE INDEX sweep_plans_store_idx ON sweep_plans (store_id, environment, created_at DESC);
