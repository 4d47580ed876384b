-- Chain watching: one cursor per (rail, environment) and every matching deposit seen on chain.
CREATE TABLE chain_cursors (
  rail          text NOT NULL,
  environment   text NOT NULL CHECK (environment IN ('test', 'live')),
  block_number  bigint NOT NULL,
  block_hash    text,
  updated_at    timestamptz NOT NULL DEFAULT now(),
  PRIMARY KEY (rail, environment)
);

-- A deposit: one token transfer (tx hash + log index; Solana: signature + 0) to a watched
-- address. `state` is what the chain says; `signalled` is what the owner was last told, so a
-- crash between the two is repaired on the next tick (an outbox for signals).
CREATE TABLE chain_deposits (
  rail          text NOT NULL,
  environment   text NOT NULL CHECK (environment IN ('test', 'live')),
  tx_hash       text NOT NULL,
  log_index     integer NOT NULL,
  to_address    text NOT NULL,
  from_address  text,
  amount_minor  numeric(78, 0) NOT NULL,
  decimals      integer NOT NULL,
  block_number  bigint NOT NULL,
  block_hash    text,
  owner_kind    text NOT NULL CHECK (owner_kind IN ('payment_link', 'invoice', 'derived')),
  owner_id      text NOT NULL,
  store_id      text NOT NULL,
  derived_index integer,
  state         text NOT NULL CHECK (state IN ('seen', 'confirmed', 'dropped')),
  signalled     text NOT NULL DEFAULT 'none',
  created_at    timestamptz NOT NULL DEFAULT now(),
  updated_at    timestamptz NOT NULL DEFAULT now(),
  PRIMARY KEY (rail, environment, tx_hash, log_index)
);
CREATE INDEX chain_deposits_open_idx ON chain_deposits (rail, environment, state) WHERE state = 'seen' OR signalled <> state;

-- Incremental loading of the in-memory watch set: rows carry an ever-increasing sequence.
ALTER TABLE watched_addresses ADD COLUMN seq bigserial;
CREATE INDEX watched_addresses_seq_idx ON watched_addresses (family, environment, seq);
