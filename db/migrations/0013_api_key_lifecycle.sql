-- Key management: a key can be named, rolled (the old key keeps working until expires_at, the
-- grace period the caller chose, and replaced_by names its successor) and revoked (revoked_at,
-- at once). A key authenticates while revoked_at IS NULL AND (expires_at IS NULL OR
-- expires_at > now()), read from this table on every request. last_used_at is written at most
-- once a minute per key, so authentication stays a read in the common case.
ALTER TABLE api_keys
  ADD COLUMN name          text CHECK (name IS NULL OR length(name) BETWEEN 1 AND 100),
  ADD COLUMN expires_at    timestamptz,
  ADD COLUMN last_used_at  timestamptz,
  ADD COLUMN replaced_by   text REFERENCES api_keys(id),
  ADD CONSTRAINT api_keys_replaced_expires CHECK (replaced_by IS NULL OR expires_at IS NOT NULL);

COMMENT ON COLUMN api_keys.expires_at IS 'End of the grace period after a roll; null while the key has not been rolled';
COMMENT ON COLUMN api_keys.replaced_by IS 'The key a roll issued in place of this one';
