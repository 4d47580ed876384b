-- Watchers rescan what is not final (rails/chain/README.md): the cursor (block_number) stays on
-- the last final block that two ticks have read, and `scanned_to` records how far the latest
-- complete read went. A tick may pass the blocks between the two (they were read before), and
-- the checkout and invoices count a deposit's confirmations up to `scanned_to`, the head the
-- watcher has read, as they counted up to the cursor when it stood at the head.
ALTER TABLE chain_cursors ADD COLUMN IF NOT EXISTS scanned_to bigint;
