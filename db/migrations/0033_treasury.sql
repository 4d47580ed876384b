-- Treasury (issue 30, docs/treasury.md).
--
-- The treasury lists a store's handed-out link and invoice addresses by joining `link_addresses`
-- to the store's links on `owner_id`: without this index every link of the store scans the
-- family's whole ledger (measured: 10,000 links took 18 s before, bench/treasury.ts). Plain
-- CREATE INDEX (migrations run in a transaction): it holds writes to the table while it builds.
CREATE INDEX link_addresses_owner_idx ON link_addresses (owner_id, family);
