-- Payment evidence (issue: payment integrity).
--
-- Every distinct M-Pesa callback is kept, not only the first: callbacks are unsigned hints, and a
-- forged one that arrives first must not hide the genuine one that follows. Identical repeats
-- (Daraja retries) share a fingerprint and are stored once. `suspicious_reason` says why a
-- callback was not believed (an amount other than the prompt's, a success the STK query denied).
ALTER TABLE mpesa_callbacks DROP CONSTRAINT mpesa_callbacks_pkey;
ALTER TABLE mpesa_callbacks ADD COLUMN id bigserial PRIMARY KEY;
ALTER TABLE mpesa_callbacks ADD COLUMN fingerprint text;
ALTER TABLE mpesa_callbacks ADD COLUMN suspicious_reason text;
UPDATE mpesa_callbacks SET fingerprint = 'legacy';
ALTER TABLE mpesa_callbacks ALTER COLUMN fingerprint SET NOT NULL;
CREATE UNIQUE INDEX mpesa_callbacks_fingerprint_idx ON mpesa_callbacks (checkout_request_id, fingerprint);

-- A simulated payment exists only in the test environment, whatever code path writes it.
ALTER TABLE payment_links ADD CONSTRAINT payment_links_simulated_test_only CHECK (NOT simulated OR environment = 'test');
