/**
 * A broadcast sweep's state, read from its transactions once its broadcast request has ended
 * (docs/treasury.md, "Followed to the end"). Pure: the follower applies it.
 *
 * - `final`: every planned transfer is final, and no transaction sent is still pending.
 * - `partially_completed` / `failed`: some planned transfer will never go through (never sent
 *   because the broadcast stopped, reverted, or dropped) and no transfer is pending any more;
 *   partially when at least one transfer went through (final), failed when none did. Top-ups still
 *   pending do not hold the outcome back: they move gas, not the tokens; they are followed anyway.
 *   (So are TRON's energy delegations: a sweep is `final` only once every transaction sent is,
 *   the undelegations that give the energy back among them.)
 * - otherwise still under way: `broadcast` while a transaction sent is in no block (pending, or
 *   taken out by a reorganisation), `mined` once every one is in a block.
 */
export type SweepTxState = 'broadcast' | 'mined' | 'final' | 'failed' | 'dropped';
/**
 * What a ledger row of a sweep records: a token `transfer` out of a source, a `top_up` of the
 * native coin into one (a TRON account's activation too), or, on TRON, staked energy lent to a
 * source (`delegate`) and taken back (`undelegate`), which move no money.
 */
export type SweepLedgerKind = 'top_up' | 'transfer' | 'delegate' | 'undelegate';
export type SweepOutcome = 'broadcast' | 'mined' | 'final' | 'partially_completed' | 'failed';

const pending = (s: SweepTxState | undefined) => s === 'broadcast' || s === 'mined';

export function sweepOutcome(
  planned: ReadonlyArray<SweepLedgerKind>,
  sent: ReadonlyArray<{ seq: number; state: SweepTxState }>,
): SweepOutcome {
  const bySeq = new Map(sent.map((t) => [t.seq, t.state]));
  const transfers = planned.flatMap((kind, seq) => (kind === 'transfer' ? [bySeq.get(seq)] : []));
  const anyPending = sent.some((t) => pending(t.state));
  if (transfers.every((s) => s === 'final')) {
    if (!anyPending) return 'final';
  } else if (!transfers.some(pending)) {
    return transfers.some((s) => s === 'final') ? 'partially_completed' : 'failed';
  }
  return sent.some((t) => t.state === 'broadcast') ? 'broadcast' : 'mined';
}

/** The outcomes a sweep ends in (its event written once): completed, or failed with what went through. */
export const sweepEnded = (s: SweepOutcome): s is 'final' | 'partially_completed' | 'failed' => s === 'final' || s === 'partially_completed' || s === 'failed';
