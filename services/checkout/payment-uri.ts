import type { Environment } from '../../domain/environment.js';
import { eip681TokenTransfer } from '../../rails/evm/eip681.js';
import { formatUsdt, fromMicro } from '../../domain/money.js';
import type { RailId } from '../../domain/rails.js';
import { solanaPayUrl } from '../../rails/solana/solana-pay.js';
import { railFacts } from '../../rails/registry.js';
import { railChainId, railEndpoint, type RailSettings } from '../../rails/settings.js';

/** What one rail asks the customer's wallet to do, for one amount. */
export interface RailPaymentRequest {
  /** The QR code's text. */
  payUri: string;
  /** What "Open in wallet" opens; null where no wallet honours a URI (TRON). */
  walletUri: string | null;
  chainId: number | null;
  tokenContract: string | null;
}

export interface PaymentRequestInput {
  rail: RailId;
  environment: Environment;
  address: string;
  /** What the customer should send now, in micro-USDT. */
  amountMicro: bigint;
  /** Solana only: the link's Solana Pay reference and mint, its store's name and its id. */
  solana?: { reference: string; mint: string | null; label: string; linkId: string };
}

/**
 * The payment request a wallet reads for one rail (docs/checkout.md, "Wallet URIs"):
 * - EVM rails: an EIP-681 USDT transfer naming the token contract, the chain id configured for
 *   the rail in the link's environment (`CHAIN_ID_<RAIL>_<ENV>`, by default the public network's:
 *   rails/evm/facts.ts; the RPCs are checked to be on it at start) and the amount in the token's
 *   smallest unit, so a wallet cannot send BNB or ETH, or USDT on another network, by mistake;
 * - Solana: the Solana Pay transfer request with the link's reference;
 * - TRON: the bare address. No TRON payment URI is honoured across wallets (TronLink, Trust and
 *   exchanges read a bare base58 address), so the page states the amount and network beside it.
 * Pure: the token contract and chain id come from the rail settings (an operator may override them).
 */
export function railPaymentRequest(rails: RailSettings, p: PaymentRequestInput): RailPaymentRequest | null {
  if (p.rail === 'MOBILE_MONEY') return null;
  const facts = railFacts[p.rail];
  const token = railEndpoint(rails, p.rail, p.environment).usdtContract ?? null;
  if (facts.family === 'evm') {
    const chainId = railChainId(rails, p.rail, p.environment);
    if (!token || !chainId) return null;
    const uri = eip681TokenTransfer({ token, chainId, to: p.address, amountMinor: fromMicro(p.amountMicro, facts.decimals) });
    return { payUri: uri, walletUri: uri, chainId, tokenContract: token };
  }
  if (facts.family === 'solana') {
    if (!p.solana) return { payUri: p.address, walletUri: null, chainId: null, tokenContract: token };
    const uri = solanaPayUrl({
      recipient: p.address,
      amount: formatUsdt(p.amountMicro),
      reference: p.solana.reference,
      label: p.solana.label,
      linkId: p.solana.linkId,
      mint: p.solana.mint ?? token ?? undefined,
    });
    return { payUri: uri, walletUri: uri, chainId: null, tokenContract: p.solana.mint ?? token };
  }
  return { payUri: p.address, walletUri: null, chainId: null, tokenContract: token };
}
