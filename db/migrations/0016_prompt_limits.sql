-- The per-phone prompt bound (domain/mpesa/prompt-limits.ts) counts a phone's recent prompts.
CREATE INDEX mpesa_stk_requests_phone_idx ON mpesa_stk_requests (phone_number, created_at);
