/**
 * The reconciler's arithmetic (docs/reconciliation.md), pure. For one address at one height:
 *
 *   expected = adjustment + recorded
 *
 * where `recorded` is the sum of the non-dropped deposits the ledger holds for the address up to
 * that height, and `adjustment` what the balance holds besides them: zero for a link's address
 * (fresh on the link branch, never handed out before), the opening balance of a derived address
 * (its wallet may have used it before Malipo watched it), minus every outflow seen since.
 *
 * More on chain than expected is money the ledger does not explain: a targeted rescan looks for
 * it, and what stays unexplained is a mismatch. Less on chain is money that moved out (the
 * merchant swept the address with their own keys): noted, and the adjustment follows it so a
 * later missed deposit still shows.
 */
export type FindingKind = 'mismatch' | 'outflow' | 'unmatched_payment' | 'unverified_payment';
export type FindingStatus = 'open' | 'resolved' | 'noted';

export type Verdict =
  | { kind: 'match' }
  | { kind: 'mismatch'; unexplained: bigint }
  | { kind: 'outflow'; amount: bigint };

export function judge(balance: bigint, recorded: bigint, adjustment: bigint): Verdict {
  const difference = balance - (adjustment + recorded);
  if (difference === 0n) return { kind: 'match' };
  return difference > 0n ? { kind: 'mismatch', unexplained: difference } : { kind: 'outflow', amount: -difference };
}

/**
 * The adjustment of an address the reconciler reads for the first time. A derived address's
 * balance beyond its recorded deposits is taken as its opening balance (never a finding); a link's
 * address starts from zero, so anything on it the ledger does not explain is reconciled.
 */
export function openingAdjustment(owner: 'payment_link' | 'invoice' | 'derived', balance: bigint, recorded: bigint): bigint {
  if (owner !== 'derived') return 0n;
  const opening = balance - recorded;
  return opening > 0n ? opening : 0n;
}

/**
 * Whether an open mismatch is worth another targeted rescan now: its balance changed, the
 * providers are not those the last rescan asked (one was added), or the last rescan is old.
 */
export function rescanDue(
  open: { balance: bigint; fingerprint: string | null; rescannedAtMs: number | null } | null,
  now: { balance: bigint; fingerprint: string; atMs: number },
  againAfterMs: number,
): boolean {
  if (!open) return true;
  if (open.balance !== now.balance || open.fingerprint !== now.fingerprint) return true;
  return open.rescannedAtMs === null || now.atMs - open.rescannedAtMs >= againAfterMs;
}
