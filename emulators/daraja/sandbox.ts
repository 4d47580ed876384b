import type { EmulatorMerchant } from './state.js';

/** Safaricom's published sandbox passkey for shortcode 174379 (public test data from the Daraja docs). */
export const sandboxPasskey = 'bfb279f9aa9bdbcf158e97dd71a467cd2e0c893059b10f78e6b72ada1ed2c919';

/** Safaricom's sandbox test phone (public Daraja test data); the demo prints it for the checkout page. */
export const sandboxTestPhone = '254708374149';

/** A sandbox paybill the Daraja emulator accepts; `tag` keeps each user's app credentials apart. */
export function sandboxPaybill(tag: string): EmulatorMerchant {
  return { consumerKey: `ck-${tag}`, consumerSecret: `cs-${tag}`, shortCode: '174379', passkey: sandboxPasskey, kind: 'paybill' };
}

/** A till (Buy Goods number 174381) under store number 174380, as the emulator's demo till; `tag` as above. */
export function sandboxTill(tag: string): EmulatorMerchant {
  return { consumerKey: `ck-${tag}`, consumerSecret: `cs-${tag}`, shortCode: '174380', passkey: 'emulator-till-passkey', kind: 'till', tills: ['174381'] };
}

/** The connect body for that paybill or till, as a merchant would send it (a till is paid at its till number). */
export function connectBody(m: EmulatorMerchant) {
  const common = { consumerKey: m.consumerKey, consumerSecret: m.consumerSecret, passkey: m.passkey, environment: 'sandbox' };
  if (m.kind === 'till') return { ...common, shortcode: m.tills![0]!, shortcodeType: 'till', storeNumber: m.shortCode };
  return { ...common, shortcode: m.shortCode };
}
