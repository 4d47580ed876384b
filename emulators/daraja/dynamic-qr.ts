import QRCode from 'qrcode';

/**
 * Daraja's Dynamic QR API (`POST /mpesa/qrcode/v1/generate`) as documented: MerchantName, RefNo,
 * Amount (whole KES above 0), TrxCode (BG, WA, PB, SM or SB), CPI (the credit party: paybill,
 * till, phone) and Size (pixels) in; ResponseCode, RequestID, ResponseDescription and QRCode (a
 * base64 PNG) out. What Safaricom encodes in the image is its own; the emulator encodes
 * `<TrxCode>|<CPI>|<RefNo>|<Amount>|<MerchantName>`, which a test decodes to check what a
 * customer's app would fill in.
 */
export const trxCodes = ['BG', 'WA', 'PB', 'SM', 'SB'] as const;

export function dynamicQrPayload(b: { TrxCode: string; CPI: string; RefNo: string; Amount: number; MerchantName: string }): string {
  return `${b.TrxCode}|${b.CPI}|${b.RefNo}|${b.Amount}|${b.MerchantName}`;
}

export async function generateDynamicQr(b: Record<string, unknown>, requestId: string): Promise<{ status: number; body: Record<string, unknown> }> {
  const problem = (message: string) => ({ status: 400, body: { requestId, errorCode: '400.002.02', errorMessage: `Bad Request - Invalid ${message}` } });
  if (typeof b.MerchantName !== 'string' || b.MerchantName === '') return problem('MerchantName');
  if (typeof b.RefNo !== 'string' || b.RefNo === '') return problem('RefNo');
  if (typeof b.Amount !== 'number' || !Number.isSafeInteger(b.Amount) || b.Amount <= 0) return problem('Amount');
  if (typeof b.TrxCode !== 'string' || !(trxCodes as readonly string[]).includes(b.TrxCode)) return problem('TrxCode');
  if (typeof b.CPI !== 'string' || !/^\d{5,12}$/.test(b.CPI)) return problem('CPI');
  const size = Number(b.Size);
  if (typeof b.Size !== 'string' || !Number.isSafeInteger(size) || size < 100 || size > 1000) return problem('Size');
  const png = await QRCode.toBuffer(dynamicQrPayload({ TrxCode: b.TrxCode, CPI: b.CPI, RefNo: b.RefNo, Amount: b.Amount, MerchantName: b.MerchantName }), { type: 'png', width: size, margin: 2 });
  return {
    status: 200,
    body: { ResponseCode: 'AG_20191219_000043fdf61864fe9ff5', RequestID: requestId, ResponseDescription: 'QR Code Successfully Generated.', QRCode: png.toString('base64') },
  };
}
