-- Link addresses are handed out once, ever (issue 12: two stores with the same xpub collided).
--
-- Before: the index on the link branch (<xpub>/1/<n>) came from a counter per store and
-- environment, so two stores holding one key — or one store's test and live environments, or a
-- store that registered a key another store had removed — were given the same addresses: a
-- primary-key violation on watched_addresses while the first link was watched, and afterwards
-- a reused address, where a late payment for one link lands on another.
--
-- Now the index sequence belongs to the key (`link_address_counters`, per address family and
-- key, shared by every store and environment that ever holds it), and every address handed out
-- is recorded in `link_addresses`, which nothing deletes: allocation steps over an address found
-- there (api/services/payment-requests.ts, db/link-address-repo.ts), so no address goes to two
-- links, whatever happened to keys, stores or counters.
CREATE TABLE link_addresses (
  family            text NOT NULL CHECK (family IN ('tron', 'evm')),
  address           text NOT NULL,              -- EVM lowercased, TRON base58 as derived
  public_key        text,                       -- the key it came from; null for addresses handed out before this migration
  derivation_index  integer CHECK (derivation_index >= 0),
  owner_id          text NOT NULL,              -- the link or invoice it was first given to
  created_at        timestamptz NOT NULL DEFAULT now(),
  PRIMARY KEY (family, address),
  CHECK ((public_key IS NULL) = (derivation_index IS NULL))
);

CREATE TABLE link_address_counters (
  family      text NOT NULL CHECK (family IN ('tron', 'evm')),
  public_key  text NOT NULL,
  next_index  integer NOT NULL CHECK (next_index >= 0),
  PRIMARY KEY (family, public_key)
);

-- Every address a link or invoice was given so far, open or closed (the first holder is kept
-- where two links already shared one).
INSERT INTO link_addresses (family, address, owner_id, created_at)
SELECT 'tron', tron_address, id, created_at FROM payment_links WHERE tron_address IS NOT NULL
ORDER BY created_at, id
ON CONFLICT DO NOTHING;
INSERT INTO link_addresses (family, address, owner_id, created_at)
SELECT 'evm', lower(evm_address), id, created_at FROM payment_links WHERE evm_address IS NOT NULL
ORDER BY created_at, id
ON CONFLICT DO NOTHING;

-- A key registered now continues after the highest index any store and environment holding it
-- reached, so it rarely has to step over the addresses recorded above. A key registered later
-- starts at 0 and steps over them.
INSERT INTO link_address_counters (family, public_key, next_index)
SELECT w.kind, w.public_key, max(c.next_index)
FROM store_wallets w
JOIN address_counters c ON c.store_id = w.store_id AND c.environment = w.environment
WHERE w.kind IN ('tron', 'evm')
GROUP BY w.kind, w.public_key;

DROP TABLE address_counters;

-- The index of a link's address is in link_addresses now (one per family: a link's TRON and EVM
-- addresses come from two keys' sequences); payment_links.address_index keeps what older rows had.
COMMENT ON COLUMN payment_links.address_index IS
  'Link-branch index of links created before migration 0014 (per-store counter); newer links: see link_addresses.derivation_index';

-- One key, one store: registering a key is serialised on the key (an advisory lock in the
-- service), and this index answers "does another store hold it" without a scan.
CREATE INDEX store_wallets_public_key_idx ON store_wallets (public_key);
