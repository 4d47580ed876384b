import { evmMethod } from '../../../rails/evm/method.js';
import type { PaymentMethod } from '../../../rails/payment-method.js';

/**
 * The fake family's rules: an EVM chain's (an address of the store's EVM xpub per link, EIP-681
 * wallet URIs naming the rail's chain id and token, addresses matched lowercased, watched in the
 * EVM watch set), under its own family name.
 */
export const fakeEvmMethod: PaymentMethod = { ...evmMethod, family: 'fake-evm' };
