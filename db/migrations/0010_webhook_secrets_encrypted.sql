-- Webhook signing secrets are stored encrypted from now on: AES-256-GCM with the ENCRYPTION_KEY
-- keyring, `v1:<keyId>:<nonce>:<ciphertext>:<tag>`, bound to the endpoint (slot
-- `webhook.<env>.<endpointId>`, and the previous secret shares the slot, so rolling moves the
-- ciphertext as it is). SQL cannot encrypt (the key is not in the database), so rows written
-- before this migration keep their `whsec_` plaintext: the delivery activity reads both forms,
-- and `npx malipo credentials:reencrypt` encrypts the plaintext ones (docs/webhooks.md).
COMMENT ON COLUMN webhook_endpoints.secret IS
  'AES-256-GCM ciphertext v1:<keyId>:… of the whsec_ secret (legacy rows: the whsec_ plaintext until credentials:reencrypt)';
COMMENT ON COLUMN webhook_endpoints.previous_secret IS
  'The rolled secret, same form and slot as secret; signs until previous_secret_expires_at';

-- What SQL can do without the key: a previous secret whose overlap is over signs nothing any
-- more, so it is dropped instead of being kept (in clear, for the old rows) for ever.
UPDATE webhook_endpoints SET previous_secret = NULL, previous_secret_expires_at = NULL
WHERE previous_secret IS NOT NULL AND (previous_secret_expires_at IS NULL OR previous_secret_expires_at <= now());

-- Only the two known forms can be stored.
ALTER TABLE webhook_endpoints
  ADD CONSTRAINT webhook_endpoints_secret_form CHECK (secret LIKE 'v1:%' OR secret LIKE 'whsec\_%'),
  ADD CONSTRAINT webhook_endpoints_previous_secret_form CHECK (previous_secret IS NULL OR previous_secret LIKE 'v1:%' OR previous_secret LIKE 'whsec\_%');

-- Idempotency records stored the whole response, secret included, for 24 hours. From now on a
-- secret-bearing response is stored with the secret encrypted (api/plugins/idempotency-seal.ts).
-- The records written before cannot be encrypted here, so their secret is removed: a replay of
-- one of those answers without `secret` (roll the secret if the first answer was lost).
UPDATE idempotency_keys SET response_body = response_body - 'secret'
WHERE path LIKE '/v1/webhook-endpoints%' AND jsonb_typeof(response_body) = 'object' AND response_body ? 'secret';
