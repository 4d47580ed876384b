import bs58 from 'bs58';
import { formatUsdt } from '../../domain/money.js';
import type { UsdtRail } from '../../domain/rails.js';
import { StoreKeyError, type PaymentMethod } from '../payment-method.js';
import { railEndpoint } from '../settings.js';
import { newSolanaReference, solanaPayUrl } from './solana-pay.js';
import { SolanaAddressError, validateSolanaWallet } from './wallet-address.js';

const mintProblem = 'a Solana mint address (base58, 32 bytes)';

/**
 * Solana's rules. Every link of a store pays the store's one wallet, so a link is found by its own
 * Solana Pay reference (README.md beside this file); the wallet URI is the Solana Pay transfer
 * request carrying it. The wallet address may serve several stores.
 */
export const solanaMethod: PaymentMethod = {
  family: 'solana',
  receives: 'reference',
  amountUnit: 'USDT',
  walletKey: {
    slot: 'solana',
    input: 'address',
    accountPath: null,
    exclusive: false,
    parse(raw) {
      try {
        const address = validateSolanaWallet(raw);
        return { key: address, firstAddress: address, firstAddressPath: null };
      } catch (err) {
        if (err instanceof SolanaAddressError) throw new StoreKeyError(err.message);
        throw err;
      }
    },
    receiveAddresses: () => [],
  },
  newReference: newSolanaReference,
  referenceUri: solanaPayUrl,
  takesChainId: false,
  contractProblem(value) {
    try {
      return bs58.decode(value).length === 32 ? null : mintProblem;
    } catch {
      return mintProblem;
    }
  },
  paymentRequest(rails, p) {
    const token = railEndpoint(rails, p.rail as UsdtRail, p.environment).usdtContract ?? null;
    if (!p.reference) return { payUri: p.address, walletUri: null, chainId: null, tokenContract: token };
    const { reference, label, linkId, mint } = p.reference;
    const uri = solanaPayUrl({ recipient: p.address, amount: formatUsdt(p.amountMicro), reference, label, linkId, mint: mint ?? token ?? undefined });
    return { payUri: uri, walletUri: uri, chainId: null, tokenContract: mint ?? token };
  },
  checkout: { panel: 'transfer', hint: 'solHint' },
  ledgerKey: (address) => address,
  watching: { watchFamily: 'sol_ref', balancesAtCursor: false },
};
