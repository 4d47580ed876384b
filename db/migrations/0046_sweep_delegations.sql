-- TRON sweeps are broadcast and followed too (issue 30; docs/treasury.md, "Sweep plans (TRON)").
-- Besides the token transfers out of the sources and the TRX sent to them (top-ups, and the
-- one-sun activations that create a source's account, recorded as top-ups), an energy-delegation
-- plan lends the funding account's staked energy to each source and takes it back: `delegate` and
-- `undelegate` rows, whose amount is the staked TRX lent (sun). They move no money to or from a
-- source; the ledger follows them so a sweep ends only once the energy came back.
ALTER TABLE sweep_transactions DROP CONSTRAINT IF EXISTS sweep_transactions_kind_check;
ALTER TABLE sweep_transactions
  ADD CONSTRAINT sweep_transactions_kind_check CHECK (kind IN ('top_up', 'transfer', 'delegate', 'undelegate'));
