-- M-Pesa: connection bookkeeping, the shared OAuth token cache, every STK push we send and every
-- callback Daraja delivers. Credentials and tokens are AES-256-GCM ciphertexts (domain/crypto).
ALTER TABLE mobile_money_connections
  ADD COLUMN updated_at timestamptz NOT NULL DEFAULT now(),
  ADD CONSTRAINT mobile_money_till_store_number
    CHECK ((shortcode_type = 'till') = (store_number IS NOT NULL));

-- One OAuth token per store and environment, shared by every API and worker process: Daraja
-- invalidates a key's previous token whenever a new one is minted, so per-process caches would
-- keep knocking each other's tokens out.
CREATE TABLE mobile_money_tokens (
  store_id      text NOT NULL,
  environment   text NOT NULL CHECK (environment IN ('test', 'live')),
  token_enc     text NOT NULL,
  expires_at    timestamptz NOT NULL,
  PRIMARY KEY (store_id, environment),
  FOREIGN KEY (store_id, environment) REFERENCES mobile_money_connections (store_id, environment) ON DELETE CASCADE
);

-- Every prompt, keyed by the workflow's (link, attempt) so a retried activity finds the prompt it
-- already sent instead of sending a second one. state: 'sending' (recorded before calling
-- Daraja), 'sent' (Daraja accepted; checkout_request_id known), 'rejected' (Daraja refused),
-- 'unknown' (no clear answer: it may or may not have reached the phone, so it is never resent).
CREATE TABLE mpesa_stk_requests (
  link_id              text NOT NULL REFERENCES payment_links(id) ON DELETE CASCADE,
  attempt              text NOT NULL,
  store_id             text NOT NULL REFERENCES stores(id) ON DELETE CASCADE,
  environment          text NOT NULL CHECK (environment IN ('test', 'live')),
  phone_number         text NOT NULL,
  amount_kes           integer NOT NULL CHECK (amount_kes BETWEEN 1 AND 250000),
  business_short_code  text NOT NULL,
  party_b              text NOT NULL,
  callback_token       text NOT NULL UNIQUE,
  state                text NOT NULL CHECK (state IN ('sending', 'sent', 'rejected', 'unknown')),
  checkout_request_id  text UNIQUE,
  merchant_request_id  text,
  failure_type         text,
  failure_message      text,
  created_at           timestamptz NOT NULL DEFAULT now(),
  updated_at           timestamptz NOT NULL DEFAULT now(),
  PRIMARY KEY (link_id, attempt),
  CHECK ((state = 'sent') = (checkout_request_id IS NOT NULL))
);

-- The first callback per CheckoutRequestID, as received. Duplicates are not stored again.
CREATE TABLE mpesa_callbacks (
  checkout_request_id  text PRIMARY KEY REFERENCES mpesa_stk_requests(checkout_request_id) ON DELETE CASCADE,
  merchant_request_id  text NOT NULL,
  result_code          text NOT NULL,
  result_desc          text NOT NULL,
  receipt              text,
  amount_kes           numeric(12, 0),
  phone_number         text,
  transaction_at       timestamptz,
  body                 jsonb NOT NULL,
  received_at          timestamptz NOT NULL DEFAULT now()
);
