import { describe, expect, it } from '@jest/globals';
import jsQRModule from 'jsqr';
import { PNG } from 'pngjs';

// jsqr is CommonJS with a `default` beside itself; its types describe only the ES default.
const jsQR = ((jsQRModule as unknown as { default?: unknown }).default ?? jsQRModule) as unknown as typeof jsQRModule.default;
import QRCode from 'qrcode';
import { eip681TokenTransfer, PaymentUriError } from '../../rails/evm/eip681.js';
import { parseUsdt } from '../../domain/money.js';
import { railPaymentRequest } from '../../services/checkout/payment-uri.js';
import { railSettingsFrom } from '../../config/rail-settings.js';
import { defaultRailSettings, type RailSettings } from '../../rails/settings.js';
import { railFacts } from '../../rails/registry.js';

const evm = '0x9858EfFD232B4033E47d90003D41EC34EcaEda94';
const tron = 'TUEZSdKsoDHQMeZwihtdoBiN46zxhGWYdH';
const sol = '9WzDXwBbmkg8ZTbNMqUxvQRAyrZzDsGYdLVL9zYtAWWM';
const rails = defaultRailSettings();
const req = (rail: Parameters<typeof railPaymentRequest>[1]['rail'], environment: 'test' | 'live', amount: string, settings: RailSettings = rails) =>
  railPaymentRequest(settings, { rail, environment, address: rail === 'USDT_TRON' ? tron : rail === 'USDT_SOL' ? sol : evm, amountMicro: parseUsdt(amount) });

describe('EIP-681 token transfers', () => {
  it('writes the token, chain id, recipient and the amount in smallest units, with no exponent', () => {
    expect(eip681TokenTransfer({ token: '0x55d398326f99059fF775485246999027B3197955', chainId: 56, to: evm, amountMinor: 12_500_000_000_000_000_000n })).toBe(
      `ethereum:0x55d398326f99059fF775485246999027B3197955@56/transfer?address=${evm}&uint256=12500000000000000000`,
    );
  });

  it('refuses what would make a wrong request: bad addresses, chain ids and amounts', () => {
    const ok = { token: evm, chainId: 1, to: evm, amountMinor: 1n };
    expect(() => eip681TokenTransfer({ ...ok, token: 'TR7NHqjeKQxGTCi8q8ZY4pL8otSzgjLj6t' })).toThrow(PaymentUriError);
    expect(() => eip681TokenTransfer({ ...ok, to: `${evm}00` })).toThrow(PaymentUriError);
    expect(() => eip681TokenTransfer({ ...ok, chainId: 0 })).toThrow(PaymentUriError);
    expect(() => eip681TokenTransfer({ ...ok, chainId: 1.5 })).toThrow(PaymentUriError);
    expect(() => eip681TokenTransfer({ ...ok, amountMinor: 0n })).toThrow(PaymentUriError);
  });
});

describe('the payment request of each rail', () => {
  it('BSC: USDT with 18 decimals on chain 56 (live) and 97 (test)', () => {
    expect(req('USDT_BSC', 'live', '12.5')).toEqual({
      payUri: `ethereum:0x55d398326f99059fF775485246999027B3197955@56/transfer?address=${evm}&uint256=12500000000000000000`,
      walletUri: `ethereum:0x55d398326f99059fF775485246999027B3197955@56/transfer?address=${evm}&uint256=12500000000000000000`,
      chainId: 56,
      tokenContract: '0x55d398326f99059fF775485246999027B3197955',
    });
    expect(req('USDT_BSC', 'test', '0.000001')!.payUri).toBe(
      `ethereum:0x337610d27c682E347C9cD60BD4b3b107C9d34dDd@97/transfer?address=${evm}&uint256=1000000000000`,
    );
  });

  it('Ethereum and Polygon: USDT with 6 decimals on their own chains', () => {
    expect(req('USDT_ETH', 'live', '1000000000')!.payUri).toBe(
      `ethereum:0xdAC17F958D2ee523a2206206994597C13D831ec7@1/transfer?address=${evm}&uint256=1000000000000000`,
    );
    expect(req('USDT_ETH', 'test', '7.25')!.payUri).toBe(`ethereum:0xaA8E23Fb1079EA71e0a56F48a2aA51851D8433D0@11155111/transfer?address=${evm}&uint256=7250000`);
    expect(req('USDT_POLYGON', 'live', '3')!.payUri).toBe(`ethereum:0xc2132D05D31c914a87C6611C10748AEb04B58e8F@137/transfer?address=${evm}&uint256=3000000`);
    // No canonical test USDT on Amoy: no request at all (the checkout shows the rail as simulated only).
    expect(req('USDT_POLYGON', 'test', '3')).toBeNull();
  });

  it('names the chain id configured for the rail (CHAIN_ID_<RAIL>_<ENV>), where its RPCs were checked to be, and the configured token', () => {
    const anvilToken = '0x5FbDB2315678afecb367f032d93F642f64180aa3';
    const settings = railSettingsFrom({
      RPC_URL_USDT_BSC_TEST: 'http://127.0.0.1:8545', USDT_CONTRACT_USDT_BSC_TEST: anvilToken, CHAIN_ID_USDT_BSC_TEST: '31337',
      RPC_URL_USDT_POLYGON_TEST: 'http://127.0.0.1:8545', USDT_CONTRACT_USDT_POLYGON_TEST: anvilToken, CHAIN_ID_USDT_POLYGON_TEST: '31337',
    });
    expect(req('USDT_BSC', 'test', '2', settings)).toMatchObject({ payUri: `ethereum:${anvilToken}@31337/transfer?address=${evm}&uint256=2000000000000000000`, chainId: 31337 });
    expect(req('USDT_POLYGON', 'test', '2', settings)!.payUri).toBe(`ethereum:${anvilToken}@31337/transfer?address=${evm}&uint256=2000000`);
    // Where no chain id is set, the public network's, whatever node the RPC points at.
    const pointedOnly = railSettingsFrom({ RPC_URL_USDT_BSC_TEST: 'http://127.0.0.1:8545', USDT_CONTRACT_USDT_BSC_TEST: anvilToken });
    expect(req('USDT_BSC', 'test', '2', pointedOnly)!.payUri).toBe(`ethereum:${anvilToken}@97/transfer?address=${evm}&uint256=2000000000000000000`);
    expect(req('USDT_BSC', 'live', '2', settings)!.chainId).toBe(56);
  });

  it('every EVM rail has a chain id per environment, testnets for test and mainnets for live', () => {
    expect(railFacts.USDT_BSC.chainIds).toEqual({ test: 97, live: 56 });
    expect(railFacts.USDT_ETH.chainIds).toEqual({ test: 11155111, live: 1 });
    expect(railFacts.USDT_POLYGON.chainIds).toEqual({ test: 80002, live: 137 });
  });

  it('TRON: the bare address, and no wallet link (TRON wallets honour no payment URI)', () => {
    expect(req('USDT_TRON', 'live', '10')).toEqual({ payUri: tron, walletUri: null, chainId: null, tokenContract: 'TR7NHqjeKQxGTCi8q8ZY4pL8otSzgjLj6t' });
  });

  it('Solana: the Solana Pay transfer request with the link\'s reference, for the amount asked', () => {
    const got = railPaymentRequest(rails, {
      rail: 'USDT_SOL', environment: 'live', address: sol, amountMicro: parseUsdt('4.5'),
      reference: { reference: 'Ref1111111111111111111111111111111111111111', mint: null, label: 'Mama Mboga', linkId: 'pl_abc' },
    });
    expect(got).toEqual({
      payUri: `solana:${sol}?amount=4.5&spl-token=Es9vMFrzaCERmJfrF4H2FYD4KCoNkY11McCe8BenwNYB&reference=Ref1111111111111111111111111111111111111111&label=Mama+Mboga&memo=pl_abc`,
      walletUri: `solana:${sol}?amount=4.5&spl-token=Es9vMFrzaCERmJfrF4H2FYD4KCoNkY11McCe8BenwNYB&reference=Ref1111111111111111111111111111111111111111&label=Mama+Mboga&memo=pl_abc`,
      chainId: null,
      tokenContract: 'Es9vMFrzaCERmJfrF4H2FYD4KCoNkY11McCe8BenwNYB',
    });
  });

  it('M-Pesa has none', () => {
    expect(railPaymentRequest(rails, { rail: 'MOBILE_MONEY', environment: 'live', address: '', amountMicro: 1n })).toBeNull();
  });
});

describe('QR codes', () => {
  it('decode back to the exact URI (qrcode rasterised to PNG, read by jsQR)', async () => {
    for (const uri of [req('USDT_BSC', 'live', '12.5')!.payUri, req('USDT_ETH', 'live', '999999.999999')!.payUri, req('USDT_TRON', 'live', '1')!.payUri]) {
      const png = PNG.sync.read(await QRCode.toBuffer(uri, { type: 'png', margin: 2, errorCorrectionLevel: 'M', scale: 4 }));
      const decoded = jsQR(new Uint8ClampedArray(png.data), png.width, png.height);
      expect(decoded?.data).toBe(uri);
    }
  });
});
