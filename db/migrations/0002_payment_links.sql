-- Payment links read model, their payments, the event outbox and address allocation.
CREATE TABLE payment_links (
  id                      text PRIMARY KEY,
  store_id                text NOT NULL REFERENCES stores(id) ON DELETE CASCADE,
  environment             text NOT NULL CHECK (environment IN ('test', 'live')),
  status                  text NOT NULL CHECK (status IN ('PENDING', 'PROCESSING', 'CONFIRMED', 'EXPIRED', 'CANCELLED')),
  usdt_amount             numeric(20, 6) NOT NULL CHECK (usdt_amount > 0),
  mobile_money_amount     integer CHECK (mobile_money_amount BETWEEN 1 AND 250000),
  kes_per_usdt            numeric(20, 6),
  rate_source             text,
  enabled_rails           text[] NOT NULL,
  address_index           integer,
  tron_address            text,
  evm_address             text,
  solana_address          text,
  solana_reference        text,
  mobile_money_shortcode  text,
  description             text,
  merchant_ref            text,
  metadata                jsonb,
  redirect_url            text,
  expires_at              timestamptz NOT NULL,
  created_at              timestamptz NOT NULL DEFAULT now(),
  updated_at              timestamptz NOT NULL DEFAULT now(),
  confirmed_rail          text,
  confirmed_at            timestamptz,
  external_id             text,
  payer                   text,
  amount_received_minor   numeric(78, 0) NOT NULL DEFAULT 0,
  simulated               boolean NOT NULL DEFAULT false,
  version                 integer NOT NULL DEFAULT 0
);
CREATE INDEX payment_links_list_idx ON payment_links (store_id, environment, created_at DESC, id DESC);
CREATE INDEX payment_links_status_idx ON payment_links (store_id, environment, status, created_at DESC);

-- Every payment seen for a link, whatever its outcome. `payment_key` is the idempotency key:
-- `<txHash>:<logIndex>` on chain, `<checkoutRequestId>` for M-Pesa.
CREATE TABLE link_payments (
  link_id        text NOT NULL REFERENCES payment_links(id) ON DELETE CASCADE,
  payment_key    text NOT NULL,
  rail           text NOT NULL,
  external_id    text,
  payer          text,
  amount_minor   numeric(78, 0),
  decimals       integer,
  state          text NOT NULL CHECK (state IN ('initiated', 'seen', 'confirmed', 'failed', 'dropped')),
  disposition    text CHECK (disposition IN ('payment', 'late', 'duplicate', 'after_cancel', 'underpaid', 'overpaid')),
  failure_reason text,
  block_number   bigint,
  created_at     timestamptz NOT NULL DEFAULT now(),
  updated_at     timestamptz NOT NULL DEFAULT now(),
  PRIMARY KEY (link_id, payment_key)
);

-- The outbox: written in the same transaction as the state change that caused the event.
CREATE TABLE events (
  id           text PRIMARY KEY,
  store_id     text NOT NULL REFERENCES stores(id) ON DELETE CASCADE,
  environment  text NOT NULL CHECK (environment IN ('test', 'live')),
  type         text NOT NULL,
  dedupe_key   text NOT NULL UNIQUE,
  payload      jsonb NOT NULL,
  created_at   timestamptz NOT NULL DEFAULT now(),
  dispatched_at timestamptz
);
CREATE INDEX events_undispatched_idx ON events (created_at) WHERE dispatched_at IS NULL;

-- Per store and environment: the next index on the link branch (<xpub>/1/<n>).
CREATE TABLE address_counters (
  store_id     text NOT NULL REFERENCES stores(id) ON DELETE CASCADE,
  environment  text NOT NULL CHECK (environment IN ('test', 'live')),
  next_index   integer NOT NULL DEFAULT 0,
  PRIMARY KEY (store_id, environment)
);

-- Addresses the chain watchers match against: one row per (family, address) of an open link or
-- invoice. family: 'tron', 'evm' (shared by BSC/ETH/Polygon), 'sol_ref' (Solana Pay reference).
CREATE TABLE watched_addresses (
  family       text NOT NULL CHECK (family IN ('tron', 'evm', 'sol_ref')),
  environment  text NOT NULL CHECK (environment IN ('test', 'live')),
  address      text NOT NULL,
  owner_kind   text NOT NULL CHECK (owner_kind IN ('payment_link', 'invoice')),
  owner_id     text NOT NULL,
  store_id     text NOT NULL,
  watch_until  timestamptz NOT NULL,
  PRIMARY KEY (family, environment, address)
);
CREATE INDEX watched_addresses_until_idx ON watched_addresses (watch_until);

CREATE TABLE idempotency_keys (
  store_id      text NOT NULL,
  environment   text NOT NULL,
  key           text NOT NULL,
  request_hash  text NOT NULL,
  method        text NOT NULL,
  path          text NOT NULL,
  status_code   integer,
  response_body jsonb,
  created_at    timestamptz NOT NULL DEFAULT now(),
  PRIMARY KEY (store_id, environment, key)
);
