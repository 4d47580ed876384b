/**
 * Kenyan MSISDNs as M-Pesa wants them: `254` followed by nine digits (12 digits, no `+`, no
 * leading 0). Both the 2547… and the newer 2541… ranges fit this shape.
 */
export const phoneFormatHint = "254 followed by nine digits: 12 digits, no '+', no spaces, no leading 0 (e.g. 254712345678)";

const msisdn = /^254\d{9}$/;

export type PhoneCheck = { ok: true; phone: string } | { ok: false; message: string };

export function checkPhoneNumber(input: string): PhoneCheck {
  if (msisdn.test(input)) return { ok: true, phone: input };
  return { ok: false, message: `Expected ${phoneFormatHint}.${suggestion(input)}` };
}

export function isPhoneNumber(input: string): boolean {
  return msisdn.test(input);
}

/** Says what the caller probably meant for the common local and international spellings. */
function suggestion(input: string): string {
  const digits = input.replace(/[\s-]/g, '');
  const local = /^0(\d{9})$/.exec(digits) ?? /^\+?254(\d{9})$/.exec(digits);
  return local ? ` Did you mean 254${local[1]}?` : '';
}

/** A phone number with its middle hidden (`2547•••••333`): enough to tell payers apart, not to dial. */
export const maskPhone = (phone: string): string => (phone.length > 6 ? `${phone.slice(0, 4)}${'•'.repeat(phone.length - 7)}${phone.slice(-3)}` : phone);

/** A payer as the dashboard shows it: a phone number masked the same way everywhere, an address as it is. */
export const shownPayer = (payer: string | null): string | null => (payer !== null && /^\+?\d{9,15}$/.test(payer) ? maskPhone(payer) : payer);
