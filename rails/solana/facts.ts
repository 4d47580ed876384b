import type { ChainRailFacts } from '../facts.js';

export const solanaFacts: ChainRailFacts = {
  id: 'USDT_SOL',
  family: 'solana',
  decimals: 6,
  requires: 'solana_wallet',
  displayName: 'Solana',
  tokenSymbol: 'USDT',
  tokenStandard: 'SPL',
  nativeCoin: 'SOL',
  chainLogo: 'solana.svg',
  tokenLogo: 'usdt.svg',
  estimatedFeeUsd: '0.01',
  estimatedConfirmationSeconds: 15,
  tagline: 'USDT on Solana, settles in seconds',
  network: 'SOL',
  endpoints: {
    // No canonical USDT on devnet: simulated-only in test unless the operator sets a mint.
    test: { rpcUrl: 'https://api.devnet.solana.com', usdtContract: undefined },
    live: { rpcUrl: 'https://api.mainnet-beta.solana.com', usdtContract: 'Es9vMFrzaCERmJfrF4H2FYD4KCoNkY11McCe8BenwNYB' },
  },
  pollMs: 2_000,
  // A slot: the watcher's heights are slots.
  blockSeconds: 0.4,
};
