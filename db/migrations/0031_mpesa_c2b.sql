-- M-Pesa paybill and till payments (C2B), issue 29.
--
-- Every link (and invoice) offering a prompted rail gets an account reference a customer types in
-- the M-Pesa menu (rails/mpesa/account-ref.ts). Unique per store and environment, for open and
-- closed links alike: a paybill payment names a link by it, even after the link closed.
ALTER TABLE payment_links ADD COLUMN mobile_money_account_ref text;
CREATE UNIQUE INDEX payment_links_account_ref_idx
  ON payment_links (store_id, environment, mobile_money_account_ref) WHERE mobile_money_account_ref IS NOT NULL;

-- The store's C2B policy. settles_alone: without Pull Transactions, a confirmation posted to the
-- secret URL settles a link by itself (docs/mobile-money.md, "Trust policy"). unallocated_allowed:
-- validation accepts payments whose reference matches no open link (kept as unallocated).
ALTER TABLE mobile_money_connections
  ADD COLUMN c2b_settles_alone boolean NOT NULL DEFAULT true,
  ADD COLUMN c2b_unallocated_allowed boolean NOT NULL DEFAULT false;

-- The confirmation and validation URLs registered with Daraja's C2B Register URL API for the
-- connected shortcode. The per-shortcode token in their path is their only credential: only its
-- SHA-256 is kept (rotated on every connect). error: Daraja's refusal, shown with the connection.
CREATE TABLE mpesa_c2b_registrations (
  store_id       text NOT NULL,
  environment    text NOT NULL CHECK (environment IN ('test', 'live')),
  shortcode      text NOT NULL,
  token_hash     bytea NOT NULL UNIQUE,
  api_version    text,
  registered_at  timestamptz,
  response       jsonb,
  error          text,
  updated_at     timestamptz NOT NULL DEFAULT now(),
  PRIMARY KEY (store_id, environment),
  FOREIGN KEY (store_id, environment) REFERENCES mobile_money_connections (store_id, environment) ON DELETE CASCADE
);

-- Every C2B confirmation, as received. TransID is unique per shortcode: a repeat counts once.
-- state: 'matched' (names a link; the link's workflow settles it), 'unallocated' (names no link),
-- 'awaiting_evidence' (the store's policy wants corroboration first), 'counted_as_prompt' (the
-- same receipt as a prompt of the link: counted once, as the prompt), 'disputed' (another post
-- claimed the same TransID with other details).
CREATE TABLE mpesa_c2b_payments (
  id                  bigserial PRIMARY KEY,
  store_id            text NOT NULL REFERENCES stores(id) ON DELETE CASCADE,
  environment         text NOT NULL CHECK (environment IN ('test', 'live')),
  shortcode           text NOT NULL,
  trans_id            text NOT NULL,
  transaction_type    text,
  trans_time          text,
  amount              numeric(14, 2) NOT NULL,
  bill_ref            text,
  account_ref         text,
  link_id             text REFERENCES payment_links(id) ON DELETE SET NULL,
  msisdn              text,
  payer_name          text,
  state               text NOT NULL CHECK (state IN ('matched', 'unallocated', 'awaiting_evidence', 'counted_as_prompt', 'disputed')),
  fingerprint         text NOT NULL,
  body                jsonb NOT NULL,
  received_at         timestamptz NOT NULL DEFAULT now(),
  UNIQUE (environment, shortcode, trans_id)
);
CREATE INDEX mpesa_c2b_payments_link_idx ON mpesa_c2b_payments (link_id) WHERE link_id IS NOT NULL;
CREATE INDEX mpesa_c2b_payments_unallocated_idx ON mpesa_c2b_payments (store_id, environment, received_at) WHERE state = 'unallocated';

-- Posts that confirm nothing: to an unknown token (a guessed or stale URL), or claiming a TransID
-- already recorded with other details (an altered replay). Kept for the merchant and operators.
CREATE TABLE mpesa_c2b_suspicious_posts (
  id           bigserial PRIMARY KEY,
  store_id     text,
  environment  text,
  kind         text NOT NULL CHECK (kind IN ('unknown_token', 'altered', 'malformed')),
  trans_id     text,
  reason       text NOT NULL,
  body         jsonb,
  received_at  timestamptz NOT NULL DEFAULT now()
);
