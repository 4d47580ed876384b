-- Per store and environment: the highest index ever handed out by POST /v1/wallets/derive on the
-- receive branch (<xpub>/0/<index>). It is the only thing derive stores: the transfer.confirmed
-- watcher scans receive addresses 0..highest_index + a gap of 20, and no index-to-user mapping
-- is kept anywhere. It only ever rises.
CREATE TABLE derived_index_marks (
  store_id       text NOT NULL REFERENCES stores(id) ON DELETE CASCADE,
  environment    text NOT NULL CHECK (environment IN ('test', 'live')),
  highest_index  integer NOT NULL CHECK (highest_index >= 0),
  updated_at     timestamptz NOT NULL DEFAULT now(),
  PRIMARY KEY (store_id, environment)
);
