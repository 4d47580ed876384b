import { cancelStoreLink } from '../../../services/payment-links/payment-links.js';
import { defineRoute } from '../../route.js';
import { linkIdParams, paymentLinkDetailSchema } from './schemas.js';

export const cancelPaymentLinkRoute = defineRoute({
  method: 'POST',
  url: '/v1/payment-links/:id/cancel',
  operationId: 'cancelPaymentLink',
  summary: 'Cancel a PENDING payment link (409 otherwise)',
  tags: ['Payment links'],
  auth: 'secret',
  params: linkIdParams,
  responses: { 200: { description: 'The cancelled link', schema: paymentLinkDetailSchema } },
  handler: async ({ deps, auth, params }) => cancelStoreLink(deps, auth, params.id),
});
