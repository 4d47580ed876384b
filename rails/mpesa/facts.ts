import type { RailFacts } from '../facts.js';

export const mpesaFacts: RailFacts = {
  id: 'MOBILE_MONEY',
  family: 'mpesa',
  decimals: 0,
  requires: 'mobile_money',
  prompted: true,
  displayName: 'M-Pesa',
  tokenSymbol: 'KES',
  chainLogo: 'mpesa.svg',
  estimatedConfirmationSeconds: 30,
  tagline: 'Pay with an M-Pesa prompt on your phone',
};
