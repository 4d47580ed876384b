import { loadCursor, type Cursor } from '../../db/chain-repo.js';
import { findLinkDeposit } from '../../db/deposit-evidence-repo.js';
import { findCheckoutLink, findCheckoutLinkWithPayments, type LinkPaymentRow, type LinkRow } from '../../db/payment-link-repo.js';
import { isId } from '../../domain/ids.js';
import { isRailId } from '../../rails/registry.js';
import type { ServiceDeps } from '../deps.js';
import { checkoutDto, type CheckoutProgress } from './dto.js';
import { confirmationsAt, mobileMoneyAttempt, seenDeposit } from './progress.js';
import type { CheckoutMenuPayment, CheckoutView } from './view.js';
import { mobileMoneyAmountDue } from '../payment-links/dto.js';
import { logoPath } from '../stores/settings.js';
import type { LogoRef } from '../../db/store-branding-repo.js';
import { isScanned } from '../../rails/methods.js';

/** The store's logo on our own origin (the checkout's CSP allows no other), from "<sha256> <content type>". */
function logoUrlOf(deps: CheckoutDeps, stored: string | null): string | null {
  if (!stored) return null;
  const [sha256, contentType] = stored.split(' ') as [string, LogoRef['contentType']];
  return `${deps.config.publicBaseUrl}${logoPath({ sha256, contentType })}`;
}

type CheckoutDeps = Pick<ServiceDeps, 'pool' | 'config'>;

/** What the hosted checkout shows for a link (public: anyone with the link's id), or null. */
export async function findCheckout(deps: CheckoutDeps, linkId: string): Promise<CheckoutView | null> {
  const found = await findCheckoutLinkWithPayments(deps.pool, linkId);
  if (!found) return null;
  return {
    ...checkoutDto(found.row, found.storeName, deps.config, await progressOf(deps, found.row, found.payments)),
    storeLogoUrl: logoUrlOf(deps, found.storeLogo),
    mobileMoneyMenu: menuPaymentOf(found.row, found.payments, found.menuPayment),
    mobileMoneyShortcodeType: found.shortcodeType,
  };
}

/**
 * What a customer types in the M-Pesa menu, where the store takes such payments: the paybill,
 * the link's account number and the KES due; or the till and the KES due (a Buy Goods payment has
 * no account number and is matched by its amount, docs/mobile-money.md).
 */
export function menuPaymentOf(row: LinkRow, payments: readonly LinkPaymentRow[], menu: 'paybill' | 'till' | null): CheckoutMenuPayment | null {
  if (menu === null || (row.status !== 'PENDING' && row.status !== 'PROCESSING')) return null;
  if (!row.mobile_money_shortcode || !row.mobile_money_account_ref) return null;
  const amountDue = mobileMoneyAmountDue(row, payments);
  return amountDue === null || amountDue <= 0 ? null : { kind: menu, shortcode: row.mobile_money_shortcode, accountRef: row.mobile_money_account_ref, amountDue };
}

/**
 * The payments in flight of an open link: the latest M-Pesa prompt, and the newest deposit still
 * short of its depth with how deep it is. A closed link needs neither. A poll is one statement,
 * two more only while a deposit is short of its depth (its block and the chain's head).
 */
async function progressOf(deps: CheckoutDeps, row: LinkRow, payments: LinkPaymentRow[]): Promise<CheckoutProgress> {
  if (row.status !== 'PENDING' && row.status !== 'PROCESSING') return { deposit: null, mobileMoney: null };
  const seen = seenDeposit(payments);
  let deposit: CheckoutProgress['deposit'] = null;
  if (seen && isScanned(seen.rail)) {
    const [evidence, cursor] = await Promise.all([
      seen.logIndex === null ? null : findLinkDeposit(deps.pool, row.id, seen.rail, seen.txHash, seen.logIndex),
      loadCursor(deps.pool, seen.rail, row.environment),
    ]);
    deposit = {
      rail: seen.rail,
      amount: seen.amount,
      txHash: seen.txHash,
      // Counted up to the last block the watcher read (its cursor itself stays on a final block).
      confirmations: confirmationsAt(evidence?.block_number ?? null, cursor ? readTo(cursor) : null),
      requiredConfirmations: deps.config.rails[seen.rail].confirmations ?? null,
    };
  }
  return { deposit, mobileMoney: mobileMoneyAttempt(payments) };
}

/** The last block a watcher has read: its scan's end, or its cursor when it has none (Solana, a rewind). */
function readTo(cursor: Cursor): string {
  return cursor.scannedTo != null && BigInt(cursor.scannedTo) > BigInt(cursor.number) ? cursor.scannedTo : cursor.number;
}

/**
 * Whether a payment link with this id exists (the checkout's public actions check it first). A
 * string that is no link id (a NUL, another prefix, any length) is no link, and is never sent to
 * the database, which refuses some of them (a NUL) as errors.
 */
export async function checkoutLinkExists(deps: Pick<ServiceDeps, 'pool'>, linkId: string): Promise<boolean> {
  return isId('paymentLink', linkId) && (await findCheckoutLink(deps.pool, linkId)) !== null;
}
