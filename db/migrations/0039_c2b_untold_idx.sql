-- The workers look every few seconds for matched C2B confirmations their link has not counted
-- (services/mpesa/c2b-handoff.ts): a range of recent matched rows, not the whole table.
CREATE INDEX mpesa_c2b_payments_matched_idx ON mpesa_c2b_payments (received_at) WHERE state = 'matched' AND link_id IS NOT NULL;
