-- A payment link or invoice is created even while Temporal cannot be reached: the row records
-- whether its workflow was started, and the workers start the ones that were not (oldest first)
-- as soon as Temporal answers. Rows from before this migration all had their workflow.
ALTER TABLE payment_links ADD COLUMN workflow_started boolean NOT NULL DEFAULT true;
ALTER TABLE payment_links ALTER COLUMN workflow_started SET DEFAULT false;
CREATE INDEX payment_links_unstarted_idx ON payment_links (created_at) WHERE NOT workflow_started;
