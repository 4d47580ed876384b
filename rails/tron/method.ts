import { isTronAddress } from './address.js';
import type { UsdtRail } from '../../domain/rails.js';
import { xpubWalletKey } from '../chain/xpub-key.js';
import type { PaymentMethod } from '../payment-method.js';
import { railEndpoint } from '../settings.js';

/**
 * TRON's rules. A link receives on its own address of the store's TRON xpub. No TRON payment URI
 * is honoured across wallets (TronLink, Trust and exchanges read a bare base58 address), so the
 * QR is the bare address and the page states the amount and network beside it.
 */
export const tronMethod: PaymentMethod = {
  family: 'tron',
  receives: 'derived_address',
  amountUnit: 'USDT',
  walletKey: xpubWalletKey('tron'),
  takesChainId: false,
  contractProblem: (value) => (isTronAddress(value) ? null : 'a TRON base58 address (T…)'),
  paymentRequest: (rails, p) => ({
    payUri: p.address,
    walletUri: null,
    chainId: null,
    tokenContract: railEndpoint(rails, p.rail as UsdtRail, p.environment).usdtContract ?? null,
  }),
  checkout: { panel: 'transfer', hint: 'tronHint' },
  ledgerKey: (address) => address,
  watching: { watchFamily: 'tron', balancesAtCursor: false },
};
