/**
 * How a connected shortcode is addressed. A paybill is both BusinessShortCode and PartyB. A till
 * (Buy Goods) is paid at the till number (PartyB) but the request is made as its store / head
 * office number, which is also the number the passkey belongs to (DESIGN.md, "M-Pesa").
 */
export const shortcodeTypes = ['paybill', 'till'] as const;
export type ShortcodeType = (typeof shortcodeTypes)[number];

export interface MpesaMerchant {
  shortcode: string;
  shortcodeType: ShortcodeType;
  /** Head-office / store number of a till; null for a paybill. */
  storeNumber: string | null;
}

export type TransactionType = 'CustomerPayBillOnline' | 'CustomerBuyGoodsOnline';

/** The number sent as BusinessShortCode and used in the Password. */
export function businessShortCode(m: MpesaMerchant): string {
  return m.shortcodeType === 'till' ? m.storeNumber ?? m.shortcode : m.shortcode;
}

export function transactionType(m: MpesaMerchant): TransactionType {
  return m.shortcodeType === 'till' ? 'CustomerBuyGoodsOnline' : 'CustomerPayBillOnline';
}

/** Paybills, tills and store numbers: 5 to 7 digits (Daraja's documents say 5–6 and 5–7). */
export const shortcodePattern = /^\d{5,7}$/;

/** Daraja's environments follow the API key's: test keys talk to the sandbox, live keys to production. */
export type DarajaEnvironment = 'sandbox' | 'live';
export const darajaEnvironmentFor = (env: 'test' | 'live'): DarajaEnvironment => (env === 'test' ? 'sandbox' : 'live');
