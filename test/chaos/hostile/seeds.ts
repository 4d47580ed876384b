import { connectBody } from '../../../emulators/daraja/sandbox.js';
import type { EmulatorMerchant } from '../../../emulators/daraja/state.js';

/** What a valid body refers to: the store's real objects and credentials. */
export interface SeedContext {
  merchant: EmulatorMerchant;
  solanaWallet: string;
  merchantRequestId?: string;
  checkoutRequestId?: string;
  evmXpub?: string;
  tronXpub?: string;
}

/** A valid body per operation, mutated one field at a time so the fuzz reaches deep validation. */
export function validBody(route: string, ctx: SeedContext): Record<string, unknown> {
  return seedsFor(ctx)[route]?.() ?? {};
}

/**
 * A valid value for each field name any operation takes (the dashboard's forms use the API's
 * field names): the base of a form the fuzz mutates one field at a time.
 */
export function validFields(ctx: SeedContext): Record<string, unknown> {
  return Object.assign({}, ...Object.values(seedsFor(ctx)).map((seed) => seed()));
}

/** A C2B post in Daraja's documented shape (a paybill payment from the M-Pesa menu). */
const c2bPost = () => ({
  TransactionType: 'Pay Bill', TransID: 'FUZZ000001', TransTime: '20260101120000', TransAmount: '10.00', BusinessShortCode: '174379',
  BillRefNumber: 'K7M2Q9XD', InvoiceNumber: '', OrgAccountBalance: '', ThirdPartyTransID: '', MSISDN: '25470****149', FirstName: 'John', MiddleName: '', LastName: 'Doe',
});

function seedsFor(ctx: SeedContext): Record<string, () => Record<string, unknown>> {
  return {
    'POST /v1/payment-links': () => ({ usdtAmount: '1.5', enabledRails: ['USDT_BSC', 'MOBILE_MONEY'], merchantRef: 'o-1', metadata: { cart: 'A7' }, expiresInMinutes: 600, description: 'fuzz' }),
    'POST /v1/payment-links/:id/simulate-payment': () => ({ rail: 'USDT_BSC' }),
    'POST /v1/checkout/:id/pay/mobile-money': () => ({ phoneNumber: '254712000002' }),
    'POST /v1/merchant/payment-links/:linkId/pay/mobile-money': () => ({ phoneNumber: '254712000003' }),
    'POST /v1/invoices': () => ({ amount: '2.5', network: 'TRON', metadata: { order: 1 }, expiresInMinutes: 600 }),
    'POST /v1/merchant/clients/:clientId/mobile-money/connect': () => connectBody(ctx.merchant),
    'POST /v1/callbacks/mpesa/:token': () => ({
      Body: { stkCallback: { MerchantRequestID: ctx.merchantRequestId, CheckoutRequestID: ctx.checkoutRequestId, ResultCode: 1032, ResultDesc: 'Request cancelled by user' } },
    }),
    'POST /v1/callbacks/c2b/:token/validation': () => c2bPost(),
    'POST /v1/callbacks/c2b/:token/confirmation': () => c2bPost(),
    'POST /v1/mobile-money/unallocated/:transId/assign': () => ({ linkId: 'pl_000000000000000000000000' }),
    'PUT /v1/merchant/clients/:clientId/settings': () => ({ lateWatchMinutes: 60, underpaymentToleranceBps: 10 }),
    'POST /v1/webhook-endpoints': () => ({ url: 'https://shop.example/h2', enabledEvents: ['payment_link.confirmed'] }),
    'PUT /v1/merchant/clients/:clientId/wallets/evm': () => ({ xpub: ctx.evmXpub }),
    'PUT /v1/merchant/clients/:clientId/wallets/tron': () => ({ xpub: ctx.tronXpub }),
    'PUT /v1/merchant/clients/:clientId/wallets/solana': () => ({ address: ctx.solanaWallet }),
    'POST /v1/wallets/derive': () => ({ index: 7 }),
    'POST /v1/keys': () => ({ kind: 'publishable', name: 'fuzz' }),
    'POST /v1/keys/:id/roll': () => ({ graceHours: 1 }),
    'POST /v1/keys/:id/revoke': () => ({ confirmSelfRevoke: false }),
    'POST /v1/sweeps': () => ({ rail: 'USDT_BSC', destination: '0x52908400098527886E0F7030069857D2E4169EE7', fundingAddress: '0x9858EfFD232B4033E47d90003D41EC34EcaEda94' }),
    'POST /v1/sweeps/:id/broadcast': () => ({ transactions: [{ raw: '0x02' }] }),
  };
}

