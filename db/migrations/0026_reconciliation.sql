-- The independent reconciler (docs/reconciliation.md): on a schedule it compares each watched
-- address's token balance on chain with what the ledger (chain_deposits) has recorded for it.
--
-- `reconciliation_addresses` is its memory per (rail, environment, address): `adjustment_minor` is
-- what the balance holds besides recorded deposits — a derived address's opening balance when the
-- reconciler first read it (the merchant's wallet may have used it before), minus every outflow
-- seen since (the merchant sweeping with their own keys). Expected balance = adjustment + recorded
-- deposits. `matched_block` is the last height at which the balance was explained: a targeted
-- rescan reads from there (from the owner's creation when it never was). Rows of addresses no
-- longer watched are deleted after a week.
CREATE TABLE reconciliation_addresses (
  rail              text NOT NULL,
  environment       text NOT NULL CHECK (environment IN ('test', 'live')),
  address           text NOT NULL,
  adjustment_minor  numeric(78, 0) NOT NULL,
  balance_minor     numeric(78, 0) NOT NULL,
  block_number      bigint NOT NULL,
  matched_block     bigint,
  checked_at        timestamptz NOT NULL DEFAULT now(),
  PRIMARY KEY (rail, environment, address)
);
CREATE INDEX reconciliation_addresses_checked_idx ON reconciliation_addresses (checked_at);

-- What the reconciler could not explain, or noted. `mismatch`: more on chain than the ledger
-- explains after a targeted rescan on every provider (a `reconciliation.mismatch` webhook; open
-- until the ledger explains it, then resolved). `outflow`: less on chain than recorded — money
-- moved out, informational (status `noted`, no webhook). One open mismatch per address: the same
-- difference is reported once; a different one updates the row and is reported again.
CREATE TABLE reconciliation_findings (
  id                  text PRIMARY KEY,
  store_id            text NOT NULL REFERENCES stores(id) ON DELETE CASCADE,
  environment         text NOT NULL CHECK (environment IN ('test', 'live')),
  rail                text NOT NULL,
  address             text NOT NULL,
  owner_kind          text NOT NULL CHECK (owner_kind IN ('payment_link', 'invoice', 'derived')),
  owner_id            text,
  derived_index       integer,
  kind                text NOT NULL CHECK (kind IN ('mismatch', 'outflow')),
  status              text NOT NULL CHECK (status IN ('open', 'resolved', 'noted')),
  balance_minor       numeric(78, 0) NOT NULL,
  recorded_minor      numeric(78, 0) NOT NULL,
  expected_minor      numeric(78, 0) NOT NULL,
  difference_minor    numeric(78, 0) NOT NULL,
  decimals            integer NOT NULL,
  block_number        bigint NOT NULL,
  -- Which providers the last targeted rescan asked (a hash of their URLs, never the URLs, which
  -- may carry keys): a new provider set rescans an open mismatch at once.
  rescan_fingerprint  text,
  rescanned_at        timestamptz,
  created_at          timestamptz NOT NULL DEFAULT now(),
  updated_at          timestamptz NOT NULL DEFAULT now(),
  resolved_at         timestamptz,
  CHECK ((kind = 'mismatch') = (status IN ('open', 'resolved')))
);
CREATE UNIQUE INDEX reconciliation_findings_open_idx ON reconciliation_findings (rail, environment, address) WHERE status = 'open';
CREATE INDEX reconciliation_findings_store_idx ON reconciliation_findings (store_id, environment, created_at DESC, id DESC);

-- The ledger side, per address: recorded deposits by recipient (EVM addresses compared lowercased).
CREATE INDEX chain_deposits_to_idx ON chain_deposits (rail, environment, lower(to_address));
-- Derived addresses are paged by address, like watched_addresses by its primary key.
CREATE INDEX derived_addresses_address_idx ON derived_addresses (family, environment, address);
