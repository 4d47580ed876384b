import { getPaymentLink } from '../../../services/payment-links/payment-links.js';
import { defineRoute } from '../../route.js';
import { linkIdParams, paymentLinkDetailSchema } from './schemas.js';

export const getPaymentLinkRoute = defineRoute({
  method: 'GET',
  url: '/v1/payment-links/:id',
  operationId: 'getPaymentLink',
  summary: 'Fetch a payment link with its confirmation fields and payments',
  tags: ['Payment links'],
  auth: 'secret',
  params: linkIdParams,
  responses: { 200: { description: 'The link', schema: paymentLinkDetailSchema } },
  handler: ({ deps, auth, params }) => getPaymentLink(deps, auth, params.id),
});
