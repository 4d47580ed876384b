import { z } from 'zod/v4';
import { railRecordSchema } from '../chains/schemas.js';

const usdt = (what: string) => z.string().describe(`${what}: a USDT decimal string`).meta({ example: '12.5' });

const checkoutRailSchema = railRecordSchema.extend({
  simulatedOnly: z.literal(true).optional().describe('Test mode without a test token: only simulate-payment completes it (no QR code)'),
  address: z.string().nullable().describe('Where to send (null for MOBILE_MONEY)'),
  payUri: z
    .string()
    .nullable()
    .describe('What the QR code carries: an EIP-681 USDT transfer (BSC, Ethereum, Polygon), a Solana Pay transfer request, or the bare TRON address')
    .meta({ example: 'ethereum:0x55d398326f99059fF775485246999027B3197955@56/transfer?address=0x9858EfFD232B4033E47d90003D41EC34EcaEda94&uint256=12500000000000000000' }),
  walletUri: z.string().nullable().describe('The link an "Open in wallet" button opens (the EIP-681 or Solana Pay URI); null for TRON and M-Pesa'),
  chainId: z.number().int().nullable().describe("EVM rails: the EIP-155 chain id in the URI, the public network of the link's environment"),
  tokenContract: z.string().nullable().describe('The USDT contract (or SPL mint) to send'),
  qrUrl: z.string().nullable().describe('An SVG of the QR code'),
});

/** GET /v1/checkout/:id: what the hosted checkout shows, free of merchant-private data. */
export const checkoutViewSchema = z.object({
  id: z.string(),
  status: z.enum(['PENDING', 'PROCESSING', 'CONFIRMED', 'EXPIRED', 'CANCELLED']),
  environment: z.enum(['test', 'live']),
  storeName: z.string(),
  storeLogoUrl: z.string().nullable().optional().describe("The store's logo, served by this server under its content hash; null without one"),
  description: z.string().nullable(),
  usdtAmount: usdt('The link amount'),
  amountDue: usdt('Still to pay: the amount less confirmed payments'),
  mobileMoneyAmount: z.number().nullable(),
  mobileMoneyShortcode: z.string().nullable(),
  expiresAt: z.string(),
  confirmedRail: z.string().nullable(),
  confirmedAt: z.string().nullable(),
  confirmedReference: z.string().nullable().describe('When confirmed: the M-Pesa receipt or the transaction hash'),
  amountReceived: usdt('Confirmed so far'),
  mobileMoneyReceipt: z.string().nullable(),
  redirectUrl: z.string().nullable(),
  deposit: z
    .object({
      rail: z.string(),
      amount: usdt('The deposit'),
      txHash: z.string(),
      confirmations: z.number().int().nullable().describe('Blocks from the deposit to the watcher, both included'),
      requiredConfirmations: z.number().int().nullable().describe("The configured depth; null when the chain's finality decides"),
    })
    .nullable()
    .describe('The newest deposit seen on chain and not yet final'),
  mobileMoney: z
    .object({
      state: z.enum(['waiting', 'failed']),
      phoneEnding: z.string().nullable().describe('Last three digits of the phone prompted'),
      failureCode: z.string().nullable().describe("An M-Pesa result code ('1032'), 'no_outcome' or 'unknown'"),
    })
    .nullable()
    .describe('The latest M-Pesa prompt while it is open or after it failed'),
  rails: z.array(checkoutRailSchema),
});
