-- Daraja Dynamic QR images, cached per link and amount (issue 29 item 7): the checkout's M-Pesa
-- panel shows a QR the M-Pesa app scans with the paybill, the account number and the amount due
-- filled in. Generated once through the store's own credentials for each amount a link asks for
-- (a part payment lowers it), then served from here: a page view never reaches Daraja twice.
CREATE TABLE mpesa_dynamic_qr (
  link_id     text NOT NULL REFERENCES payment_links (id) ON DELETE CASCADE,
  amount      integer NOT NULL CHECK (amount > 0),
  png         bytea NOT NULL,
  created_at  timestamptz NOT NULL DEFAULT now(),
  PRIMARY KEY (link_id, amount)
);
