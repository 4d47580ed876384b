-- Merchant dashboard sessions. The browser holds a random token in an HttpOnly cookie; only its
-- SHA-256 is kept here, so a copy of this table signs nobody in. The secret key that opened the
-- session is never stored: key_id ties the session to it, and revoking that key ends the session
-- (the lookup joins api_keys and requires revoked_at IS NULL).
CREATE TABLE dashboard_sessions (
  token_hash   bytea PRIMARY KEY CHECK (length(token_hash) = 32),
  store_id     text NOT NULL REFERENCES stores(id) ON DELETE CASCADE,
  environment  text NOT NULL CHECK (environment IN ('test', 'live')),
  key_id       text NOT NULL REFERENCES api_keys(id) ON DELETE CASCADE,
  created_at   timestamptz NOT NULL DEFAULT now(),
  expires_at   timestamptz NOT NULL,
  revoked_at   timestamptz,
  CHECK (expires_at > created_at)
);
CREATE INDEX dashboard_sessions_key_idx ON dashboard_sessions (key_id);
CREATE INDEX dashboard_sessions_expiry_idx ON dashboard_sessions (expires_at);
