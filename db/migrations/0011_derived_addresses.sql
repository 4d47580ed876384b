-- What the chain watchers' in-memory watch set loads, and how it finds what is new
-- (activities/chains/README.md).
--
-- `created_xid` is the id of the transaction that wrote the row. A sequence number is taken at
-- insert but becomes visible at commit, so rows can appear out of order and a reader that resumes
-- after the highest number it saw skips the late ones. A transaction id does not have that gap: a
-- row a reader could not see was written by a transaction at or after the xmin of the reader's
-- snapshot, so the next load asks for created_xid >= that xmin (a transactional outbox read).
ALTER TABLE watched_addresses ADD COLUMN created_xid xid8 NOT NULL DEFAULT pg_current_xact_id();
CREATE INDEX watched_addresses_xid_idx ON watched_addresses (family, environment, created_xid);

-- A registered key that changes (or comes back) brings its derived addresses in at the next tick.
ALTER TABLE store_wallets ADD COLUMN changed_xid xid8 NOT NULL DEFAULT pg_current_xact_id();
CREATE INDEX store_wallets_xid_idx ON store_wallets (kind, environment, changed_xid);

-- Receive-branch addresses (<xpub>/0/<index>) the transfer.confirmed watcher matches: each index
-- POST /v1/wallets/derive handed out (`handed_out`), plus the 20 after the store's highest (the
-- gap, for wallets that pre-generate). Written by the derive request, which derives them anyway,
-- so the watchers never derive and their cost follows the number of rows, not an index's value.
-- Which indexes were handed out is stored; to whom is not. A row is watched while `public_key` is
-- the store's registered key of that family.
CREATE TABLE derived_addresses (
  store_id       text NOT NULL REFERENCES stores(id) ON DELETE CASCADE,
  environment    text NOT NULL CHECK (environment IN ('test', 'live')),
  family         text NOT NULL CHECK (family IN ('tron', 'evm')),
  public_key     text NOT NULL,
  derived_index  integer NOT NULL CHECK (derived_index >= 0),
  address        text NOT NULL,
  handed_out     boolean NOT NULL,
  created_xid    xid8 NOT NULL DEFAULT pg_current_xact_id(),
  created_at     timestamptz NOT NULL DEFAULT now(),
  PRIMARY KEY (store_id, environment, family, public_key, derived_index)
);
CREATE INDEX derived_addresses_xid_idx ON derived_addresses (family, environment, created_xid);
CREATE INDEX derived_addresses_load_idx ON derived_addresses (family, environment, store_id, derived_index);
-- Pruning gap rows the highest index has passed reads only gap rows, however many were handed out.
CREATE INDEX derived_addresses_gap_idx ON derived_addresses (store_id, environment, family, public_key, derived_index) WHERE NOT handed_out;

-- Marks written before this migration have no rows above: the worker backfills them once at start
-- (api/services/derived-addresses.ts) and clears the flag. Marks written from now on start false.
ALTER TABLE derived_index_marks ADD COLUMN backfill_pending boolean NOT NULL DEFAULT true;
ALTER TABLE derived_index_marks ALTER COLUMN backfill_pending SET DEFAULT false;
