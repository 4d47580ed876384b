-- Stores (merchants), their API keys and per-environment settings and connections.
CREATE TABLE stores (
  id          text PRIMARY KEY,
  name        text NOT NULL CHECK (length(name) BETWEEN 1 AND 200),
  created_at  timestamptz NOT NULL DEFAULT now()
);

-- Secret keys are stored as SHA-256 hashes (key_hash); publishable keys are public by design
-- and kept as they are so the checkout can look a store up by its `pk`.
CREATE TABLE api_keys (
  id               text PRIMARY KEY,
  store_id         text NOT NULL REFERENCES stores(id) ON DELETE CASCADE,
  environment      text NOT NULL CHECK (environment IN ('test', 'live')),
  kind             text NOT NULL CHECK (kind IN ('secret', 'publishable')),
  key_hash         bytea UNIQUE,
  publishable_key  text UNIQUE,
  last4            text NOT NULL,
  created_at       timestamptz NOT NULL DEFAULT now(),
  revoked_at       timestamptz,
  CHECK ((kind = 'secret') = (key_hash IS NOT NULL)),
  CHECK ((kind = 'publishable') = (publishable_key IS NOT NULL))
);
CREATE INDEX api_keys_store_idx ON api_keys (store_id, environment);

CREATE TABLE store_settings (
  store_id                    text NOT NULL REFERENCES stores(id) ON DELETE CASCADE,
  environment                 text NOT NULL CHECK (environment IN ('test', 'live')),
  late_payment_watch_minutes  integer NOT NULL DEFAULT 1440 CHECK (late_payment_watch_minutes BETWEEN 0 AND 43200),
  underpayment_tolerance_bps  integer NOT NULL DEFAULT 0 CHECK (underpayment_tolerance_bps BETWEEN 0 AND 10000),
  updated_at                  timestamptz NOT NULL DEFAULT now(),
  PRIMARY KEY (store_id, environment)
);

-- Extended public keys (TRON, EVM) and the Solana wallet address, per environment.
CREATE TABLE store_wallets (
  store_id      text NOT NULL REFERENCES stores(id) ON DELETE CASCADE,
  environment   text NOT NULL CHECK (environment IN ('test', 'live')),
  kind          text NOT NULL CHECK (kind IN ('tron', 'evm', 'solana')),
  public_key    text NOT NULL,
  connected_at  timestamptz NOT NULL DEFAULT now(),
  PRIMARY KEY (store_id, environment, kind)
);

-- The connected M-Pesa paybill or till. Credentials are AES-256-GCM ciphertexts (see domain/crypto).
CREATE TABLE mobile_money_connections (
  store_id             text NOT NULL REFERENCES stores(id) ON DELETE CASCADE,
  environment          text NOT NULL CHECK (environment IN ('test', 'live')),
  shortcode            text NOT NULL,
  shortcode_type       text NOT NULL DEFAULT 'paybill' CHECK (shortcode_type IN ('paybill', 'till')),
  store_number         text,
  consumer_key_enc     text NOT NULL,
  consumer_secret_enc  text NOT NULL,
  passkey_enc          text NOT NULL,
  connected_at         timestamptz NOT NULL DEFAULT now(),
  PRIMARY KEY (store_id, environment)
);
