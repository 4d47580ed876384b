/**
 * The link workflow's patches: each gates a change with `patched(id)`, so histories recorded
 * before it replay their original commands. The old branches they keep are in
 * payment-link-legacy.ts; workflows/README.md ("Legacy branches") lists when each may go.
 */

/**
 * Signals became hints settled by evidence (the recorded deposit, the STK query). Histories
 * recorded before this change replay their original decisions; every new decision, in old and
 * new workflows alike, takes the verified path. Checked at every message and every prompt check.
 */
export const signalsAreHintsPatch = 'signals-are-hints';

/**
 * Before this patch, two handlers waiting for the lock were both let in by the same condition
 * check (a cancel and a prompt accepted in one workflow task ran side by side: the prompt rang on
 * a link the cancel had just closed). Histories recorded before it replay the old way. Checked
 * every time the lock is taken.
 */
export const exclusiveLockPatch = 'exclusive-handler-lock';

/**
 * The workflow pulls its evidence: it reads what was recorded for it (`pendingEvidence`) when it
 * starts, when a chain hint wakes it, every `evidencePullMs` while open, before it expires and
 * before it ends; and it asks M-Pesa once more about every prompt left without an outcome before
 * it ends. A deposit no longer depends on a signal having been delivered (a workflow that did not
 * exist yet when its deposit was told). Histories recorded before it replay without the pulls.
 * Checked once, at a run's first task (`LinkRun.pulls`).
 */
export const pullEvidencePatch = 'pull-evidence';

/**
 * The workflow shows its state where ops look in the Temporal UI (issue 34): on every status
 * change it upserts a memo (the status, the expiry, and once settled "watching for late payments
 * until …", domain/link-display.ts), and once settled the `MalipoWatchUntil` search attribute.
 * Histories recorded before it replay without these upserts. Checked at every status change (`LinkRun.moveTo`).
 */
export const uiStatePatch = 'ui-state-memo';

/**
 * A confirmation's webhook event is dispatched by the outbox relay (worker/webhook-relay.ts) the
 * moment the confirming activity commits it, no longer by a `dispatchEvent` activity of the
 * link's own: that activity cost a Temporal task per event (about 20 ms of the server's CPU),
 * which capped webhooks at 280–380 deliveries a second. Histories recorded before it replay their
 * `dispatchEvent`. Checked at each confirmation (`onConfirmed`, payment-link-payments.ts).
 */
export const outboxRelayPatch = 'outbox-relay';
