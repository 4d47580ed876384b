import { findDynamicQr, saveDynamicQr } from '../../db/mpesa-qr-repo.js';
import { findCheckoutLinkWithPayments } from '../../db/payment-link-repo.js';
import { isId } from '../../domain/ids.js';
import { DarajaAnswerError, DarajaUnreachableError } from '../../rails/mpesa/daraja-client.js';
import { dynamicQrBody, dynamicQrPath, parseDynamicQr } from '../../rails/mpesa/dynamic-qr.js';
import { CredentialsUnreadableError, NotConnectedError, openMerchantSession } from '../../rails/mpesa/merchant-session.js';
import type { ServiceDeps } from '../deps.js';
import { menuPaymentOf } from './checkout.js';

export type MenuQr = { png: Buffer } | { none: true } | { unavailable: string };

/**
 * The Dynamic QR of a link's "pay from the M-Pesa menu" block: the paybill, the link's account
 * number and the KES still due (TrxCode PB), or the till and the KES still due (TrxCode BG; the
 * account number goes in RefNo, which Daraja requires, but a Buy Goods payment does not carry it),
 * as Daraja draws it for the M-Pesa app. Only where the block is shown (an open link of a paybill
 * or till whose C2B URLs Daraja took); generated through the store's own
 * credentials once per link and amount, then read from the database, so page views and reloads
 * never reach Daraja again. `unavailable` when Daraja cannot draw it now (the page keeps the
 * typed instructions).
 */
export async function menuQr(deps: Pick<ServiceDeps, 'pool' | 'config'>, linkId: string): Promise<MenuQr> {
  if (!isId('paymentLink', linkId)) return { none: true };
  const found = await findCheckoutLinkWithPayments(deps.pool, linkId);
  if (!found) return { none: true };
  const menu = menuPaymentOf(found.row, found.payments, found.menuPayment);
  if (!menu) return { none: true };
  const cached = await findDynamicQr(deps.pool, linkId, menu.amountDue);
  if (cached) return { png: cached };
  let answer;
  try {
    const session = await openMerchantSession(deps, found.row.store_id, found.row.environment);
    answer = await session.post(dynamicQrPath, dynamicQrBody({
      merchantName: found.storeName, shortcode: menu.shortcode, shortcodeType: menu.kind, accountRef: menu.accountRef, amount: menu.amountDue,
    }));
  } catch (err) {
    if (err instanceof DarajaUnreachableError || err instanceof DarajaAnswerError || err instanceof NotConnectedError || err instanceof CredentialsUnreadableError) {
      return { unavailable: err.message };
    }
    throw err;
  }
  const parsed = parseDynamicQr(answer.status, answer.json);
  if ('refused' in parsed) return { unavailable: parsed.refused };
  await saveDynamicQr(deps.pool, linkId, menu.amountDue, parsed.png);
  return { png: parsed.png };
}
