-- Till (Buy Goods) payments matched by amount (issue 29; db/mpesa-till-repo.ts).
--
-- A till confirmation carries no account number. It names a prompt's link by its receipt (Daraja
-- posts a paid prompt to the C2B URL too), else it matches the one open link whose KES amount
-- still due is its amount: the open links of the store with at least that amount are read.
CREATE INDEX mpesa_callbacks_receipt_idx ON mpesa_callbacks (receipt) WHERE receipt IS NOT NULL;
CREATE INDEX payment_links_open_kes_idx ON payment_links (store_id, environment, mobile_money_amount)
  WHERE status IN ('PENDING', 'PROCESSING') AND mobile_money_amount IS NOT NULL;
