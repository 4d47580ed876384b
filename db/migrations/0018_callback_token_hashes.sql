-- An M-Pesa callback URL carries an unguessable per-prompt token: whoever holds it can post
-- callbacks for that prompt. Until this release the token was stored as it is, so a database dump
-- or backup handed out every open prompt's callback URL. Now only its SHA-256 is kept (as for
-- secret API keys); a callback is found by hashing the token in its path.
ALTER TABLE mpesa_stk_requests ADD COLUMN callback_token_hash bytea;
UPDATE mpesa_stk_requests SET callback_token_hash = sha256(convert_to(callback_token, 'UTF8'));
ALTER TABLE mpesa_stk_requests ALTER COLUMN callback_token_hash SET NOT NULL;
ALTER TABLE mpesa_stk_requests ADD CONSTRAINT mpesa_stk_requests_callback_token_hash_key UNIQUE (callback_token_hash);
ALTER TABLE mpesa_stk_requests DROP COLUMN callback_token;
