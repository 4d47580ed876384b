-- Treasury (issue 30, docs/treasury.md).
--
-- The treasury lists a store's handed-out link and invoice addresses by joining `link_addresses`
-- to the store's links on `owner_id`: without this index every link of the store scans the
-- family's whole ledger (measured: 10,000 links took 18 s before, bench/treasury.ts). Plain
-- CREATE INDEX (migrations run in a transaction): it holds writes to the table while it builds.
CREATE INDEX link_addresses_owner_idx ON link_addresses (owner_id, family);

-- Where a sweep may send a store's money: a per-store, per-environment, per-rail allowlist that
-- only the store's owners change, in the dashboard (API keys cannot). A destination is usable
-- from `usable_at` (its creation plus TREASURY_DESTINATION_DELAY_SECONDS, 24 h by default), so a
-- stolen session or key cannot add an address and sweep to it at once. Removal keeps the row.
CREATE TABLE sweep_destinations (
  id           text PRIMARY KEY,                        -- sdst_…
  store_id     text NOT NULL REFERENCES stores(id) ON DELETE CASCADE,
  environment  text NOT NULL CHECK (environment IN ('test', 'live')),
  rail         text NOT NULL,
  address      text NOT NULL,                           -- the rail's ledger form (EVM lowercased)
  label        text NOT NULL DEFAULT '',
  added_by     text NOT NULL,                           -- the dashboard user (an owner)
  created_at   timestamptz NOT NULL DEFAULT now(),
  usable_at    timestamptz NOT NULL,
  removed_at   timestamptz,
  removed_by   text,
  CHECK (usable_at >= created_at)
);
CREATE UNIQUE INDEX sweep_destinations_active_idx ON sweep_destinations (store_id, environment, rail, address) WHERE removed_at IS NULL;
