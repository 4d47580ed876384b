-- Store settings the dashboard edits (docs/dashboard.md, "Settings"):
-- * a default redirect URL per environment, given to links created without `redirectUrl`. It is
--   checked by the service (https, a public host, the link's URL rules); the database keeps the
--   shape that matters if a check were ever skipped: https and at most 2,000 characters.
-- * a logo per store, shown on the hosted checkout. The checkout's Content-Security-Policy lets
--   it load images only from our own origin, so the logo is uploaded and kept here, served at a
--   URL named by its SHA-256 (so it can be cached for good). PNG, JPEG or WebP only (never SVG,
--   which can carry script), at most 100 KB; the service checks the bytes, the database the rest.
ALTER TABLE store_settings
  ADD COLUMN default_redirect_url text
    CHECK (default_redirect_url IS NULL OR (default_redirect_url LIKE 'https://%' AND length(default_redirect_url) <= 2000));

CREATE TABLE store_logos (
  store_id      text PRIMARY KEY REFERENCES stores(id) ON DELETE CASCADE,
  sha256        text NOT NULL CHECK (sha256 ~ '^[0-9a-f]{64}$'),
  content_type  text NOT NULL CHECK (content_type IN ('image/png', 'image/jpeg', 'image/webp')),
  bytes         bytea NOT NULL CHECK (octet_length(bytes) BETWEEN 1 AND 102400),
  updated_at    timestamptz NOT NULL DEFAULT now()
);
-- The public logo URL names the hash, not the store.
CREATE INDEX store_logos_sha256_idx ON store_logos (sha256);
