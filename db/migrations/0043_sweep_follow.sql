-- Every sent sweep transaction is followed to its end (issue 30 follow-up; docs/treasury.md).
-- A transaction can now be `dropped`: it left no receipt and its sender's nonce was taken by
-- another transaction at the rail's final height. A sweep can end `partially_completed`: its
-- broadcast stopped short (or a transaction failed or was dropped) after some transfers went
-- through. `broadcast_ended_at` is when the broadcast request ended (sent all, or stopped): from
-- then on the follower owns the sweep, and not before, so it never ends one still being sent.
ALTER TABLE sweep_plans DROP CONSTRAINT IF EXISTS sweep_plans_state_check;
ALTER TABLE sweep_plans
  ADD CONSTRAINT sweep_plans_state_check CHECK (state IN ('broadcast', 'mined', 'final', 'partially_completed', 'failed')),
  ADD COLUMN broadcast_ended_at timestamptz;
-- Sweeps broadcast before this migration: their request has ended.
UPDATE sweep_plans SET broadcast_ended_at = coalesce(finished_at, broadcast_at) WHERE broadcast_at IS NOT NULL;

ALTER TABLE sweep_transactions DROP CONSTRAINT IF EXISTS sweep_transactions_state_check;
ALTER TABLE sweep_transactions
  ADD CONSTRAINT sweep_transactions_state_check CHECK (state IN ('broadcast', 'mined', 'final', 'failed', 'dropped'));
-- The follower's work: transactions not yet at their end.
CREATE INDEX sweep_transactions_pending_idx ON sweep_transactions (rail, environment) WHERE state IN ('broadcast', 'mined');
