import { describe, expect, it } from '@jest/globals';
import QRCode from 'qrcode';
import { dynamicQrBody, maxQrBytes, parseDynamicQr } from '../../rails/mpesa/dynamic-qr.js';

/** Daraja's Dynamic QR answer, taken only when it is what it claims: a PNG of a sane size. */
describe('Dynamic QR (rails/mpesa/dynamic-qr.ts)', () => {
  it('asks for a paybill (PB) or till (BG) code of whole KES above 0, and refuses any other amount', () => {
    expect(dynamicQrBody({ merchantName: 'Duka', shortcode: '600123', shortcodeType: 'paybill', accountRef: 'K7M2Q9XD', amount: 1 }))
      .toEqual({ MerchantName: 'Duka', RefNo: 'K7M2Q9XD', Amount: 1, TrxCode: 'PB', CPI: '600123', Size: '300' });
    expect(dynamicQrBody({ merchantName: 'x'.repeat(100), shortcode: '5012', shortcodeType: 'till', accountRef: 'R', amount: 250_000 }))
      .toMatchObject({ TrxCode: 'BG', Amount: 250_000, MerchantName: 'x'.repeat(40) });
    for (const amount of [0, -1, 1.5, Number.NaN, Number.MAX_SAFE_INTEGER + 2]) {
      expect(() => dynamicQrBody({ merchantName: 'Duka', shortcode: '600123', shortcodeType: 'paybill', accountRef: 'R', amount })).toThrow(RangeError);
    }
  });

  it('takes a PNG, and refuses an error answer, a missing or empty code, a code that is no PNG, and one larger than any QR image', async () => {
    const png = await QRCode.toBuffer('PB|600123|K7M2Q9XD|1500|Duka', { type: 'png', width: 300 });
    expect(parseDynamicQr(200, { ResponseCode: 'AG_1', QRCode: png.toString('base64') })).toEqual({ png });
    expect(parseDynamicQr(400, { errorCode: '400.002.02', errorMessage: 'Bad Request - Invalid CPI' })).toEqual({ refused: 'Daraja answered HTTP 400: Bad Request - Invalid CPI' });
    expect(parseDynamicQr(500, '<html>')).toEqual({ refused: 'Daraja answered HTTP 500' });
    expect(parseDynamicQr(200, { ResponseCode: 'AG_1' })).toEqual({ refused: 'Daraja answered without a QR code' });
    expect(parseDynamicQr(200, { ResponseCode: 'AG_1', QRCode: '' })).toEqual({ refused: 'Daraja answered without a QR code' });
    expect(parseDynamicQr(200, null)).toEqual({ refused: 'Daraja answered without a QR code' });
    // Daraja's own documentation sample is a placeholder string, not an image.
    expect(parseDynamicQr(200, { ResponseCode: 'AG_1', QRCode: 'SYEEHEHJJSJSKKKSSSHDBDDBBHSHSBSBHSHSBBBXBXXB' })).toEqual({ refused: 'Daraja sent a QR code that is not a PNG image' });
    const huge = Buffer.concat([png.subarray(0, 8), Buffer.alloc(maxQrBytes)]).toString('base64');
    expect(parseDynamicQr(200, { ResponseCode: 'AG_1', QRCode: huge })).toEqual({ refused: 'Daraja sent a QR image larger than any QR image' });
  });
});
