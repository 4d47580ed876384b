import { createHash } from 'node:crypto';
import { parseDarajaTimestamp } from './time.js';

/**
 * When a paybill confirmation (C2B) is the same money as a paid prompt whose callback was lost.
 *
 * A paid STK prompt may reach us a second time as a C2B confirmation (or a pulled record) whose
 * TransID is the prompt's receipt. A believable callback names that receipt and ties the two
 * together (`promptOfLinkWithReceipt`); a prompt whose callback was lost is settled by the STK query,
 * which carries no receipt. Then the two are the same payment when they agree on everything else
 * we hold: the link, the amount, the payer's phone (as Daraja masks or hashes it) and a payment
 * time inside the prompt's window. Pure: no I/O here.
 */

/**
 * How far a twin's payment time may be from its prompt: a customer answers a prompt within about
 * a minute (the SIM toolkit gives up after that); the margins cover clocks and a slow network.
 */
export const promptTwinWindow = { beforeMs: 2 * 60_000, afterMs: 15 * 60_000 } as const;

/**
 * Whether the MSISDN Daraja sent with a C2B payment can be this phone (2547XXXXXXXX). Daraja sends
 * it in full (older shortcodes), masked (`25471****678`, `2547 ***** 126`) or as the SHA-256 hex of
 * the number. A mask must keep at least six digits to tell phones apart; anything else (empty, a
 * name, a mask with too little left) is not this phone.
 */
export function msisdnMayBe(msisdn: string | null, phone: string): boolean {
  if (!msisdn || !/^\d{9,15}$/.test(phone)) return false;
  const text = msisdn.replace(/\s+/g, '');
  if (/^\d+$/.test(text)) return text === phone;
  if (/^[0-9a-f]{64}$/i.test(text)) return createHash('sha256').update(phone, 'utf8').digest('hex') === text.toLowerCase();
  const mask = /^(\d*)\*+(\d*)$/.exec(text);
  if (!mask) return false;
  const [head, tail] = [mask[1]!, mask[2]!];
  return head.length + tail.length >= 6 && head.length + tail.length < phone.length && phone.startsWith(head) && phone.endsWith(tail);
}

/** When the C2B payment was made: its TransTime (Kenyan time) where it is one, else when we received it. */
export function c2bPaidAt(transTime: string | null, receivedAt: string): Date {
  return (transTime ? parseDarajaTimestamp(transTime) : null) ?? new Date(receivedAt);
}

/** Whether a payment made at `paidAt` falls inside the window of a prompt sent at `promptAt`. */
export function insidePromptWindow(promptAt: Date, paidAt: Date): boolean {
  const d = paidAt.getTime() - promptAt.getTime();
  return d >= -promptTwinWindow.beforeMs && d <= promptTwinWindow.afterMs;
}

export interface TwinPrompt { checkoutRequestId: string; phone: string; amountKes: number; sentAt: Date }
export interface TwinC2b { transId: string; msisdn: string | null; amountKes: string | null; paidAt: Date }

/** Whether a receipt-less paid prompt and a C2B payment of the same link are the same money. */
export const sameMoney = (p: TwinPrompt, c: TwinC2b): boolean =>
  c.amountKes === String(p.amountKes) && msisdnMayBe(c.msisdn, p.phone) && insidePromptWindow(p.sentAt, c.paidAt);
