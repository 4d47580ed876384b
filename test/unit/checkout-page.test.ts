import { describe, expect, it } from '@jest/globals';
import { resultReason } from '../../rails/mpesa/result-codes.js';
import { mpesaFailureCode } from '../../services/checkout/progress.js';
import type { CheckoutView } from '../../services/checkout/view.js';
import { formatKes, formatUsdtAmount, fromAcceptLanguage, mpesaFailureText, pickLanguage, t } from '../../web/checkout/i18n.js';
import { en, sw, type MessageKey } from '../../web/checkout/messages.js';
import { renderCheckoutPanel } from '../../web/checkout/page.js';
import { normalizePhoneInput } from '../../web/checkout/pay-form.js';

const placeholders = (s: string) => [...s.matchAll(/\{(\w+)\}/g)].map((m) => m[1]).sort();

describe('checkout languages', () => {
  it('has every text in Swahili with the same placeholders as in English', () => {
    for (const key of Object.keys(en) as MessageKey[]) {
      expect({ key, sw: placeholders(sw[key]) }).toEqual({ key, sw: placeholders(en[key]) });
      expect(sw[key].length).toBeGreaterThan(0);
    }
  });

  it('picks the switch, then the remembered choice, then Accept-Language by q-value, else English', () => {
    expect(pickLanguage('sw', 'en', 'en')).toEqual({ lang: 'sw', chosen: true });
    expect(pickLanguage(undefined, 'sw', 'en-GB')).toEqual({ lang: 'sw', chosen: true });
    expect(pickLanguage('fr', 'xx', 'sw-KE,sw;q=0.9,en;q=0.8')).toEqual({ lang: 'sw', chosen: false });
    // The script's ?hl= (navigator.languages) beats the header but is the browser's, not a choice.
    expect(pickLanguage(undefined, undefined, 'en', 'sw')).toEqual({ lang: 'sw', chosen: false });
    expect(pickLanguage(undefined, 'en', 'sw', 'sw')).toEqual({ lang: 'en', chosen: true });
    expect(fromAcceptLanguage('fr-FR, en;q=0.5, sw;q=0.7')).toBe('sw');
    expect(fromAcceptLanguage('de, fr;q=0.9')).toBe('en');
    expect(fromAcceptLanguage('sw;q=0, en')).toBe('en');
    expect(fromAcceptLanguage('')).toBe('en');
  });

  it('formats amounts for the locale from decimal strings, never through a float', () => {
    expect(formatUsdtAmount('en', '1000000000.000001')).toBe('1,000,000,000.000001 USDT');
    expect(formatUsdtAmount('sw', '12.5')).toBe('12.5 USDT');
    expect(formatKes('en', 1625)).toBe('KES 1,625');
  });

  it('words every M-Pesa failure the workflow records, in both languages', () => {
    for (const code of ['1', '2', '3', '4', '8', '17', '26', '1001', '1019', '1025', '9999', '1032', '1037', '2001', '2028', '8006', 'SFC_IC0003']) {
      const found = mpesaFailureCode(resultReason(code).reason);
      expect(found).toBe(code);
      expect(mpesaFailureText('sw', found)).toBe(sw[`mpesa_${code}` as MessageKey]);
    }
    expect(mpesaFailureCode(resultReason('4999', 'Odd <b>text</b>').reason)).toBe('4999');
    expect(mpesaFailureText('en', '4999')).toBe('M-Pesa did not complete the payment (code 4999).');
    expect(mpesaFailureCode('M-Pesa never reported an outcome for this prompt.')).toBe('no_outcome');
    expect(mpesaFailureCode(null)).toBe('unknown');
  });

  it('reads the ways customers type their number', () => {
    expect(normalizePhoneInput('0712 345 678')).toBe('254712345678');
    expect(normalizePhoneInput('+254-712-345-678')).toBe('254712345678');
    expect(normalizePhoneInput('0712')).toBe('0712');
  });
});

const view = (over: Partial<CheckoutView> = {}): CheckoutView => ({
  id: 'pl_000000000000000000000001', status: 'PENDING', environment: 'live', storeName: 'Duka <Bora>', description: null,
  usdtAmount: '10', amountDue: '10', mobileMoneyAmount: 1300, mobileMoneyShortcode: '174379', expiresAt: new Date(Date.now() + 3_600_000).toISOString(),
  confirmedRail: null, confirmedAt: null, confirmedReference: null, amountReceived: '0', mobileMoneyReceipt: null, redirectUrl: null,
  deposit: null, mobileMoney: null,
  rails: [
    { network: 'MOBILE_MONEY', displayName: 'M-Pesa', tokenSymbol: 'KES', chainLogoUrl: '/l.svg', estimatedConfirmationSeconds: 30, tagline: '', address: null, payUri: null, walletUri: null, chainId: null, tokenContract: null, qrUrl: null },
    { network: 'USDT_BSC', displayName: 'BNB Smart Chain', tokenSymbol: 'USDT', tokenStandard: 'BEP20', chainLogoUrl: '/b.svg', estimatedConfirmationSeconds: 5, estimatedFeeUsd: '0.01', tagline: '',
      address: '0xabc', payUri: 'ethereum:0xT@56/transfer?address=0xabc&uint256=10', walletUri: 'ethereum:0xT@56/transfer?address=0xabc&uint256=10', chainId: 56, tokenContract: '0xT', qrUrl: '/p/x/qr/USDT_BSC.svg' },
  ],
  ...over,
});
const render = (v: CheckoutView, lang: 'en' | 'sw' = 'en', rail?: string, chosen = false) => renderCheckoutPanel(v, { lang, chosen, rail });

describe('checkout panel per state', () => {
  it('waiting: the rails as links that work without JavaScript, the QR with its URI as alt text, escaped names', () => {
    const html = render(view(), 'en', 'USDT_BSC');
    expect(html).toContain('Pay Duka &lt;Bora&gt;');
    expect(html).toContain('href="?rail=MOBILE_MONEY"');
    expect(html).toContain('alt="QR code for your wallet. It holds: ethereum:0xT@56/transfer?address=0xabc&amp;uint256=10"');
    expect(html).toContain('Send only USDT on BNB Smart Chain. Another coin (such as BNB)');
    expect(html).not.toContain('data-testid="state"');
  });

  it('prices every rail on its choice (KES for M-Pesa, USDT due for a chain), and carries only a switched language in links', () => {
    const html = render(view({ amountDue: '1250.5' }), 'sw');
    expect(html).toContain('<b class="price" data-testid="price-MOBILE_MONEY">KES 1,300</b>');
    expect(html).toContain('<b class="price" data-testid="price-USDT_BSC">1,250.5 USDT</b>');
    expect(html).toContain('href="?rail=USDT_BSC"');
    expect(render(view({ mobileMoneyAmount: null }))).not.toContain('price-MOBILE_MONEY');
    const switched = render(view(), 'sw', 'MOBILE_MONEY', true);
    expect(switched).toContain('href="?rail=USDT_BSC&amp;lang=sw"');
    expect(switched).toContain('<input type="hidden" name="lang" value="sw">');
    expect(render(view(), 'sw', 'MOBILE_MONEY')).not.toContain('name="lang"');
  });

  it('M-Pesa: a form that posts without JavaScript; waiting hides it; a failure says why in Swahili', () => {
    expect(render(view(), 'en', 'MOBILE_MONEY')).toContain('<form method="post" action="/p/pl_000000000000000000000001/pay/mobile-money"');
    const waiting = render(view({ status: 'PROCESSING', mobileMoney: { state: 'waiting', phoneEnding: '149', failureCode: null } }));
    expect(waiting).toContain('Check your phone');
    expect(waiting).toContain('the phone ending 149');
    expect(waiting).not.toContain('<form');
    const failed = render(view({ mobileMoney: { state: 'failed', phoneEnding: '149', failureCode: '1032' } }), 'sw');
    expect(failed).toContain('Malipo ya M-Pesa hayakufanikiwa');
    expect(failed).toContain('Ulighairi ombi kwenye simu yako.');
    expect(failed).toContain('<form');
  });

  it('seen: confirmations counting to the depth; underpaid: what is still due', () => {
    const seen = render(view({ status: 'PROCESSING', deposit: { rail: 'USDT_BSC', amount: '10', txHash: '0x1', confirmations: 2, requiredConfirmations: 3 } }));
    expect(seen).toContain('We saw 10 USDT on BNB Smart Chain. Confirmations: 2 of 3.');
    const under = render(view({ amountReceived: '4', amountDue: '6' }), 'en', 'USDT_BSC');
    expect(under).toContain('Received 4 USDT. Still to pay: 6 USDT.');
    expect(under).toContain('<code data-testid="pay-amount">6</code>');
  });

  it('confirmed: a receipt; the redirect only when it is a web link', () => {
    const paid = view({ status: 'CONFIRMED', confirmedRail: 'USDT_BSC', confirmedAt: '2025-01-02T03:04:05Z', confirmedReference: '0xfeed', amountReceived: '10', redirectUrl: 'javascript:alert(1)' });
    const html = render(paid);
    expect(html).toContain('Payment received');
    expect(html).toContain('0xfeed');
    expect(html).not.toContain('javascript:');
    expect(render({ ...paid, redirectUrl: 'https://shop.example/ok' })).toContain('href="https://shop.example/ok"');
  });

  it('expired and cancelled: what to do now', () => {
    expect(render(view({ status: 'EXPIRED' }))).toContain('Already sent a payment?');
    expect(render(view({ status: 'CANCELLED' }), 'sw')).toContain('Kiungo hiki cha malipo kimeghairiwa');
  });
});

it('t fills placeholders', () => {
  expect(t('sw', 'backTo', { store: 'Duka' })).toBe('Rudi kwa Duka');
});
