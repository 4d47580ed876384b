-- Dashboard accounts: people sign in with an email and a password, and belong to stores with a
-- role. Secret API keys no longer open the dashboard (they are for servers), so the sessions
-- they opened end here: every key-opened session is deleted and its holder signs in again with
-- an account.
CREATE TABLE dashboard_users (
  id                  text PRIMARY KEY,
  -- Lower-cased and trimmed by the service; unique as written.
  email               text NOT NULL UNIQUE CHECK (email = lower(email) AND length(email) BETWEEN 3 AND 254),
  -- An argon2id PHC string ($argon2id$v=19$m=…,t=…,p=…$salt$hash): the parameters travel with it.
  password_hash       text NOT NULL CHECK (password_hash LIKE '$argon2id$%'),
  created_at          timestamptz NOT NULL DEFAULT now(),
  password_changed_at timestamptz NOT NULL DEFAULT now()
);

CREATE TABLE store_members (
  store_id   text NOT NULL REFERENCES stores(id) ON DELETE CASCADE,
  user_id    text NOT NULL REFERENCES dashboard_users(id) ON DELETE CASCADE,
  role       text NOT NULL CHECK (role IN ('owner', 'developer', 'viewer')),
  created_at timestamptz NOT NULL DEFAULT now(),
  PRIMARY KEY (store_id, user_id)
);
CREATE INDEX store_members_user_idx ON store_members (user_id);

-- An owner invites a colleague by email; the link carries a random token whose SHA-256 is kept
-- here. Accepting it (signed in as that email, or creating that account) makes the membership.
CREATE TABLE store_invitations (
  token_hash  bytea PRIMARY KEY CHECK (length(token_hash) = 32),
  store_id    text NOT NULL REFERENCES stores(id) ON DELETE CASCADE,
  email       text NOT NULL CHECK (email = lower(email)),
  role        text NOT NULL CHECK (role IN ('owner', 'developer', 'viewer')),
  invited_by  text REFERENCES dashboard_users(id) ON DELETE SET NULL,
  created_at  timestamptz NOT NULL DEFAULT now(),
  expires_at  timestamptz NOT NULL,
  accepted_at timestamptz,
  revoked_at  timestamptz
);
CREATE INDEX store_invitations_store_idx ON store_invitations (store_id);

-- Sessions now belong to a person; store_id and environment are what the session is looking at
-- (the switcher changes them), and the lookup joins store_members, so removing a member ends
-- their access to that store at once.
DELETE FROM dashboard_sessions;
DROP INDEX dashboard_sessions_key_idx;
ALTER TABLE dashboard_sessions
  DROP COLUMN key_id,
  ADD COLUMN user_id text NOT NULL REFERENCES dashboard_users(id) ON DELETE CASCADE;
CREATE INDEX dashboard_sessions_user_idx ON dashboard_sessions (user_id);
