import { expect } from '@jest/globals';
import type { EmulatorMerchant } from '../../emulators/daraja/state.js';
import { connectBody } from './daraja.js';
import type { Stack } from './stack.js';

/**
 * What the M-Pesa menu (C2B) suites do through the API: connect the store's paybill, make a
 * MOBILE_MONEY link whose workflow runs, and read it. `ctx` is called each time: the suites fill
 * their stack, store and key in beforeAll.
 */
export function mobileMoneyLinks(ctx: () => { stack: Stack; storeId: string; key: string }) {
  const getLink = async (id: string) => (await ctx().stack.request({ method: 'GET', url: `/v1/payment-links/${id}`, key: ctx().key })).body;
  return {
    connect: (merchant: EmulatorMerchant, extra: Record<string, unknown> = {}) => {
      const { stack, storeId, key } = ctx();
      return stack.request({ method: 'POST', url: `/v1/merchant/clients/${storeId}/mobile-money/connect`, key, payload: { ...connectBody(merchant), ...extra } });
    },
    newLink: async (amount: number) => {
      const { stack, key } = ctx();
      const res = await stack.request({ method: 'POST', url: '/v1/payment-links', key, payload: { enabledRails: ['MOBILE_MONEY'], mobileMoneyAmount: amount } });
      expect(res.status).toBe(201);
      await stack.workflowStarted(res.body.id);
      return res.body as { id: string; mobileMoneyAccountRef: string };
    },
    getLink,
    /** For `eventually`: the link once it reads `status`, else undefined. */
    statusIs: (id: string, status: string) => async () => {
      const l = await getLink(id);
      return l.status === status ? l : undefined;
    },
  };
}
