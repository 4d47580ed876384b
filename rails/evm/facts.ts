import type { ChainRailFacts } from '../facts.js';

/**
 * eth-infinitism's `Simple7702Account` (`@account-abstraction/contracts@0.8.0`, audited with
 * EntryPoint v0.8 `0x4337084D9E255Ff0702461CF8895CE9E3b5Ff108`), deployed by them at this address
 * on every chain they support: the EIP-7702 delegate of sponsored sweep plans (docs/treasury.md).
 * Ethereum (Pectra), BSC (Pascal) and Polygon (Bhilai) run EIP-7702; a plan checks the code is there.
 */
export const simple7702Account = '0xe6Cae83BdE06E4c305530e199D7217f42808555B';

// The EVM chains share one adapter (client, scanner, address scheme); each is one rail.
// Contracts: DESIGN.md "Rails" (mainnet) and research/chains.md §2 (testnets).

export const bscFacts: ChainRailFacts = {
  id: 'USDT_BSC',
  family: 'evm',
  decimals: 18,
  requires: 'evm_xpub',
  displayName: 'BNB Smart Chain',
  tokenSymbol: 'USDT',
  tokenStandard: 'BEP20',
  nativeCoin: 'BNB',
  chainLogo: 'bsc.svg',
  tokenLogo: 'usdt.svg',
  estimatedFeeUsd: '0.01',
  estimatedConfirmationSeconds: 5,
  tagline: 'USDT on BNB Smart Chain, fast and cheap',
  network: 'BSC',
  endpoints: {
    test: { rpcUrl: 'https://bsc-testnet-dataseed.bnbchain.org', usdtContract: '0x337610d27c682E347C9cD60BD4b3b107C9d34dDd', sweepDelegate: simple7702Account },
    live: { rpcUrl: 'https://bsc-dataseed.bnbchain.org', usdtContract: '0x55d398326f99059fF775485246999027B3197955', sweepDelegate: simple7702Account },
  },
  pollMs: 1_000,
  // 0.75 s since the Maxwell upgrade (June 2025).
  blockSeconds: 0.75,
  chainIds: { test: 97, live: 56 },
};

export const ethereumFacts: ChainRailFacts = {
  id: 'USDT_ETH',
  family: 'evm',
  decimals: 6,
  requires: 'evm_xpub',
  displayName: 'Ethereum',
  tokenSymbol: 'USDT',
  tokenStandard: 'ERC20',
  nativeCoin: 'ETH',
  chainLogo: 'ethereum.svg',
  tokenLogo: 'usdt.svg',
  estimatedFeeUsd: '0.50',
  estimatedConfirmationSeconds: 960,
  tagline: 'USDT on Ethereum mainnet',
  network: 'ETH',
  endpoints: {
    test: { rpcUrl: 'https://ethereum-sepolia-rpc.publicnode.com', usdtContract: '0xaA8E23Fb1079EA71e0a56F48a2aA51851D8433D0', sweepDelegate: simple7702Account },
    live: { rpcUrl: 'https://ethereum-rpc.publicnode.com', usdtContract: '0xdAC17F958D2ee523a2206206994597C13D831ec7', sweepDelegate: simple7702Account },
  },
  pollMs: 6_000,
  blockSeconds: 12,
  // Sepolia for test keys.
  chainIds: { test: 11_155_111, live: 1 },
};

export const polygonFacts: ChainRailFacts = {
  id: 'USDT_POLYGON',
  family: 'evm',
  decimals: 6,
  requires: 'evm_xpub',
  displayName: 'Polygon PoS',
  tokenSymbol: 'USDT',
  tokenStandard: 'Polygon PoS',
  nativeCoin: 'POL',
  chainLogo: 'polygon.svg',
  tokenLogo: 'usdt.svg',
  estimatedFeeUsd: '0.01',
  estimatedConfirmationSeconds: 10,
  tagline: 'USDT on Polygon, low fees',
  network: 'POLYGON',
  endpoints: {
    // No canonical USDT on Amoy: test links offer Polygon as simulated-only unless the operator sets one.
    test: { rpcUrl: 'https://polygon-amoy-bor-rpc.publicnode.com', usdtContract: undefined, sweepDelegate: simple7702Account },
    live: { rpcUrl: 'https://polygon-bor-rpc.publicnode.com', usdtContract: '0xc2132D05D31c914a87C6611C10748AEb04B58e8F', sweepDelegate: simple7702Account },
  },
  pollMs: 2_000,
  blockSeconds: 2,
  // Amoy for test keys.
  chainIds: { test: 80_002, live: 137 },
};
