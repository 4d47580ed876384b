import type { CommonQueryMethods, DatabasePool } from 'slonik';
import { findLinkByAccountRef } from '../../db/mpesa-c2b-repo.js';
import { findLinkOfPromptReceipt, findTillCandidates, lockTillMatching } from '../../db/mpesa-till-repo.js';
import type { Environment } from '../../domain/environment.js';
import { c2bPaymentKeyPrefix } from '../../rails/mpesa/c2b.js';
import { paidByPrompt } from '../../rails/methods.js';
import { allRails } from '../../rails/registry.js';

/** What matching a C2B payment (a confirmation, or a record Pull Transactions listed) looks at. */
export interface C2bToMatch {
  storeId: string;
  environment: Environment;
  transId: string;
  /** Whole shillings. */
  amount: string;
  /** The normalised account reference it names, if any. */
  accountRef: string | null;
  /** A till (Buy Goods) payment: it carries no account number. */
  buyGoods: boolean;
}

/**
 * Finds the link a C2B payment names and stores the payment with it (`store` gets the link id, or
 * null: unallocated). A paybill payment names its link by its account reference, open or closed
 * (a payment after cancel or expiry is recorded as such). A till (Buy Goods) payment carries no
 * account number: it names the link of the prompt whose receipt it is (Daraja posts a paid prompt
 * to the C2B URL too), or else the one open link whose KES amount still due is exactly its amount;
 * none or two or more: unallocated, for the merchant to assign. The amount match and the store
 * happen in one transaction under a per-store lock, and a payment matched but not yet counted is
 * a claim on its link (db/mpesa-till-repo.ts): two till payments of one amount never both match
 * the single link that asked for it. A repeated TransID is still stored once (`store` sees it).
 */
export async function storeWithItsLink<T>(pool: DatabasePool, p: C2bToMatch, store: (db: CommonQueryMethods, linkId: string | null) => Promise<T>): Promise<T> {
  const byRef = p.accountRef ? await findLinkByAccountRef(pool, p.storeId, p.environment, p.accountRef) : null;
  if (byRef || !p.buyGoods) return store(pool, byRef?.id ?? null);
  return pool.transaction(async (tx) => {
    await lockTillMatching(tx, p.storeId, p.environment);
    return store(tx, await tillLink(tx, p));
  });
}

async function tillLink(db: CommonQueryMethods, p: C2bToMatch): Promise<string | null> {
  const ofPrompt = await findLinkOfPromptReceipt(db, p.storeId, p.environment, p.transId);
  if (ofPrompt) return ofPrompt;
  const candidates = await findTillCandidates(db, {
    storeId: p.storeId, environment: p.environment, amount: p.amount, promptRails: allRails().filter(paidByPrompt), paymentKeyPrefix: c2bPaymentKeyPrefix,
  });
  return candidates.length === 1 ? candidates[0]! : null;
}
