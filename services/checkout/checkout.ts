import { findCheckoutLink } from '../../db/payment-link-repo.js';
import type { ServiceDeps } from '../deps.js';
import { checkoutDto } from './dto.js';
import type { CheckoutView } from './view.js';

/** What the hosted checkout shows for a link (public: anyone with the link's id), or null. */
export async function findCheckout(deps: Pick<ServiceDeps, 'pool' | 'config'>, linkId: string): Promise<CheckoutView | null> {
  const found = await findCheckoutLink(deps.pool, linkId);
  return found ? checkoutDto(found.row, found.storeName, deps.config) : null;
}

/** Whether a payment link with this id exists (the checkout's public actions check it first). */
export async function checkoutLinkExists(deps: Pick<ServiceDeps, 'pool'>, linkId: string): Promise<boolean> {
  return (await findCheckoutLink(deps.pool, linkId)) !== null;
}
