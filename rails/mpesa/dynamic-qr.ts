import { z } from 'zod';
import type { ShortcodeType } from './merchant.js';

/**
 * Daraja's Dynamic QR API (`POST /mpesa/qrcode/v1/generate`): a QR code the M-Pesa and My
 * Safaricom apps scan with the business number, the account reference and the amount filled in.
 * Pure: the body we send and the answer we accept. Made with the store's own OAuth credentials;
 * it moves no money (the payment it starts arrives as a C2B confirmation like any other).
 */
export const dynamicQrPath = '/mpesa/qrcode/v1/generate';

/** The square image's side in pixels that we ask for. */
export const dynamicQrSize = 300;

/** The most we accept as one QR image (a 300 px PNG is a few KB). */
export const maxQrBytes = 256 * 1024;

/**
 * TrxCode: PB pays a paybill (CPI: the business number; RefNo: the account number), BG buys
 * goods at a till (CPI: the till number). The other codes (WA, SM, SB) are not ours to use.
 */
export function dynamicQrBody(o: { merchantName: string; shortcode: string; shortcodeType: ShortcodeType; accountRef: string; amount: number }) {
  if (!Number.isSafeInteger(o.amount) || o.amount <= 0) throw new RangeError(`a Dynamic QR amount is whole KES above 0, not ${o.amount}`);
  return {
    // Daraja's examples keep it short; the app shows it on the confirmation screen.
    MerchantName: o.merchantName.slice(0, 40),
    RefNo: o.accountRef,
    Amount: o.amount,
    TrxCode: o.shortcodeType === 'till' ? 'BG' : 'PB',
    CPI: o.shortcode,
    Size: String(dynamicQrSize),
  };
}

const answer = z.object({
  ResponseCode: z.string(),
  ResponseDescription: z.string().optional(),
  QRCode: z.string().min(1),
});

const pngMagic = Buffer.from([0x89, 0x50, 0x4e, 0x47, 0x0d, 0x0a, 0x1a, 0x0a]);

/** The PNG in Daraja's answer, or why the answer is not one we take (an error, no image, not a PNG, too large). */
export function parseDynamicQr(status: number, body: unknown): { png: Buffer } | { refused: string } {
  if (status < 200 || status > 299) {
    const b = body as { errorMessage?: unknown; errorCode?: unknown } | null;
    return { refused: `Daraja answered HTTP ${status}${typeof b?.errorMessage === 'string' ? `: ${b.errorMessage.slice(0, 200)}` : ''}` };
  }
  const parsed = answer.safeParse(body);
  if (!parsed.success) return { refused: 'Daraja answered without a QR code' };
  if (parsed.data.QRCode.length > Math.ceil((maxQrBytes * 4) / 3) + 4) return { refused: 'Daraja sent a QR image larger than any QR image' };
  const png = Buffer.from(parsed.data.QRCode, 'base64');
  if (png.length < pngMagic.length || !png.subarray(0, pngMagic.length).equals(pngMagic)) return { refused: 'Daraja sent a QR code that is not a PNG image' };
  return { png };
}
