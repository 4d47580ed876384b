import type { ChainRailFacts } from '../facts.js';

// Contracts: DESIGN.md "Rails" (mainnet) and research/chains.md §2 (testnets).
export const tronFacts: ChainRailFacts = {
  id: 'USDT_TRON',
  family: 'tron',
  decimals: 6,
  requires: 'tron_xpub',
  displayName: 'TRON',
  tokenSymbol: 'USDT',
  tokenStandard: 'TRC20',
  nativeCoin: 'TRX',
  chainLogo: 'tron.svg',
  tokenLogo: 'usdt.svg',
  estimatedFeeUsd: '3.50',
  estimatedConfirmationSeconds: 60,
  tagline: 'USDT on TRON, the most used stablecoin network',
  network: 'TRON',
  endpoints: {
    test: { rpcUrl: 'https://nile.trongrid.io', usdtContract: 'TXYZopYRdj2D9XRtbG411XZZ3kM5VkAeBf' },
    live: { rpcUrl: 'https://api.trongrid.io', usdtContract: 'TR7NHqjeKQxGTCi8q8ZY4pL8otSzgjLj6t' },
  },
  pollMs: 3_000,
  blockSeconds: 3,
};
