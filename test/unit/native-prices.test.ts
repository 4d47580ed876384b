import { afterAll, beforeAll, describe, expect, it } from '@jest/globals';
import { createServer, type Server } from 'node:http';
import { nativeUsdPrice, priceUnits, usdValue, type NativePriceSettings } from '../../services/rates/native-prices.js';

/**
 * Native-coin USD prices for sweep costs (docs/rates.md, "Native coin prices"), read from stand-ins
 * for CoinGecko and Coinbase on loopback that answer in those services' documented shapes
 * (`/api/v3/simple/price?ids=…&vs_currencies=usd` → `{"binancecoin":{"usd":612.34}}`;
 * `/v2/exchange-rates?currency=BNB` → `{"data":{"currency":"BNB","rates":{"USD":"612.5"}}}`).
 */
const prices: Record<string, { coingecko?: number; coinbase?: string }> = {};
const hits: string[] = [];
let server: Server;
let base: string;

beforeAll(async () => {
  server = createServer((req, res) => {
    const url = new URL(req.url!, 'http://x');
    hits.push(url.pathname + url.search);
    const [kind] = url.pathname.split('/').filter(Boolean);
    res.setHeader('content-type', 'application/json');
    if (url.pathname === '/gecko/api/v3/simple/price' && url.searchParams.get('vs_currencies') === 'usd') {
      const id = url.searchParams.get('ids')!;
      const coin = { binancecoin: 'BNB', ethereum: 'ETH', 'polygon-ecosystem-token': 'POL' }[id];
      const p = coin ? prices[coin]?.coingecko : undefined;
      res.end(JSON.stringify(p === undefined ? {} : { [id]: { usd: p } }));
    } else if (url.pathname === '/cb/v2/exchange-rates') {
      const coin = url.searchParams.get('currency')!;
      const p = prices[coin]?.coinbase;
      if (p === undefined) { res.statusCode = 400; res.end(JSON.stringify({ errors: [{ id: 'invalid_request', message: 'Invalid currency' }] })); return; }
      res.end(JSON.stringify({ data: { currency: coin, rates: { USD: p, EUR: '1' } } }));
    } else {
      res.statusCode = 404;
      res.end(JSON.stringify({ kind }));
    }
  });
  await new Promise<void>((r) => server.listen(0, '127.0.0.1', r));
  base = `http://127.0.0.1:${(server.address() as { port: number }).port}`;
});
afterAll(() => void server.close());

const both = (): NativePriceSettings => ({ sources: [`coingecko@${base}/gecko`, `coinbase@${base}/cb`], testPrices: {} });

describe('native coin USD prices', () => {
  it('takes the price two sources agree on (within 2 %), in their own wire formats, and reuses it for a minute', async () => {
    prices.BNB = { coingecko: 612.34, coinbase: '612.5' };
    const got = await nativeUsdPrice(both(), 'live', 'BNB');
    expect(got).toEqual({ ok: true, usd: '612.34', source: expect.stringMatching(/^coingecko@127\.0\.0\.1:\d+\+coinbase@127\.0\.0\.1:\d+$/) });
    const asked = hits.length;
    prices.BNB = { coingecko: 1, coinbase: '1' };
    expect(await nativeUsdPrice(both(), 'live', 'BNB')).toEqual(got);
    expect(hits.length).toBe(asked);
  });

  it('one source down: the other serves; both down or disagreeing: no price, and why', async () => {
    prices.ETH = { coinbase: '3000.125' };
    expect(await nativeUsdPrice(both(), 'live', 'ETH')).toMatchObject({ ok: true, usd: '3000.125', source: expect.stringMatching(/^coinbase@/) });
    const none = await nativeUsdPrice(both(), 'live', 'SOL');
    expect(none).toEqual({ ok: false, reason: expect.stringMatching(/^No SOL\/USD price source answered \(coingecko@.*no usable SOL\/USD price in the answer; coinbase@.*HTTP 400\)\.$/) });
    prices.POL = { coingecko: 0.5, coinbase: '0.6' };
    expect(await nativeUsdPrice(both(), 'live', 'POL')).toEqual({ ok: false, reason: expect.stringMatching(/^The POL\/USD price sources disagree by more than 2% \(coingecko@\S+ 0\.5, coinbase@\S+ 0\.6\)\.$/) });
  });

  it('test keys read the fixed prices only, and ask no source', async () => {
    const asked = hits.length;
    expect(await nativeUsdPrice({ ...both(), testPrices: { BNB: '600' } }, 'test', 'BNB')).toEqual({ ok: true, usd: '600', source: 'fixed-test-price' });
    expect(await nativeUsdPrice(both(), 'test', 'BNB')).toEqual({ ok: false, reason: expect.stringMatching(/^Test keys price no BNB .*TEST_NATIVE_USD_PRICES/) });
    expect(hits.length).toBe(asked);
  });

  it('prices are exact decimals: 10^-8 USD units, junk refused', () => {
    expect(priceUnits('612.34')).toBe(61_234_000_000n);
    expect(priceUnits(0.1)).toBe(10_000_000n);
    expect(priceUnits('0.123456789')).toBe(12_345_678n);
    for (const bad of ['', '-1', '0', '1e3', 'NaN', null, {}, Number.POSITIVE_INFINITY, '1,5']) expect(priceUnits(bad)).toBeUndefined();
  });

  it('a USD value is the amount times the price, 6 decimals, rounded up', () => {
    // 0.000171 BNB at 612.34 = 0.10471014 USD → 0.104711
    expect(usdValue(171_000_000_000_000n, 18, '612.34')).toBe('0.104711');
    expect(usdValue(10n ** 18n, 18, '612.34')).toBe('612.34');
    expect(usdValue(1n, 18, '612.34')).toBe('0.000001');
    expect(usdValue(0n, 18, '612.34')).toBe('0');
  });
});
