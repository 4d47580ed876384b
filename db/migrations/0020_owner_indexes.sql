-- Rows found by their owner on hot and periodic paths: an invoice poll reads the invoice's latest
-- deposit, and a link that closes stops being watched. Without these, both read the whole table
-- (measured in test/integration/hot-path-indexes.test.ts). Plain CREATE INDEX (migrations run in a
-- transaction): it holds writes to the table while it builds, a few seconds per million rows.
CREATE INDEX chain_deposits_owner_idx ON chain_deposits (owner_id, owner_kind);
CREATE INDEX watched_addresses_owner_idx ON watched_addresses (owner_id);
