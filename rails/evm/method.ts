import { isAddress } from 'viem';
import { fromMicro } from '../../domain/money.js';
import type { UsdtRail } from '../../domain/rails.js';
import { xpubWalletKey } from '../chain/xpub-key.js';
import type { PaymentMethod } from '../payment-method.js';
import { railFacts } from '../registry.js';
import { railChainId, railEndpoint } from '../settings.js';
import { eip681TokenTransfer } from './eip681.js';

/**
 * The EVM chains' rules (BSC, Ethereum, Polygon: one family, each chain a rail of facts in
 * facts.ts). A link receives on its own address of the store's EVM xpub; the wallet URI is an
 * EIP-681 USDT transfer naming the token contract, the chain id configured for the rail
 * (`CHAIN_ID_<RAIL>_<ENV>`) and the amount in the token's smallest unit, so a wallet cannot send
 * BNB or ETH, or USDT on another network, by mistake (docs/checkout.md, "Wallet URIs").
 */
export const evmMethod: PaymentMethod = {
  family: 'evm',
  receives: 'derived_address',
  amountUnit: 'USDT',
  walletKey: xpubWalletKey('evm'),
  takesChainId: true,
  contractProblem: (value) => (isAddress(value, { strict: false }) ? null : 'an EVM address (0x and 40 hex digits)'),
  paymentRequest(rails, p) {
    const rail = p.rail as UsdtRail;
    const token = railEndpoint(rails, rail, p.environment).usdtContract ?? null;
    const chainId = railChainId(rails, rail, p.environment);
    if (!token || !chainId) return null;
    const uri = eip681TokenTransfer({ token, chainId, to: p.address, amountMinor: fromMicro(p.amountMicro, railFacts[rail].decimals) });
    return { payUri: uri, walletUri: uri, chainId, tokenContract: token };
  },
  checkout: { panel: 'transfer', hint: 'evmHint' },
  // Checksummed or not, an EVM address is one account: recorded and matched lowercased.
  ledgerKey: (address) => address.toLowerCase(),
  watching: { watchFamily: 'evm', balancesAtCursor: true },
};
