-- The SPL mint a Solana link asks for, fixed at creation (test environments use their own mint).
ALTER TABLE payment_links ADD COLUMN solana_mint text;
