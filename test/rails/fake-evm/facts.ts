import type { RailFacts } from '../../../rails/facts.js';

/**
 * A test-only rail of a family of its own, `fake-evm`: USDT on an EVM-like chain that only the
 * test's anvil node runs (chain id 31337). It takes the store's EVM xpub, so a link pays it on
 * its EVM address; nothing in the product names it. Its endpoints are placeholders: the test sets
 * `RPC_URL_USDT_FAKE_TEST` and `USDT_CONTRACT_USDT_FAKE_TEST`, as an operator would.
 */
export const fakeEvmFacts: Omit<RailFacts, 'id'> & { id: string } = {
  id: 'USDT_FAKE',
  family: 'fake-evm',
  decimals: 6,
  requires: 'evm_xpub',
  displayName: 'Fake Chain',
  tokenSymbol: 'USDT',
  tokenStandard: 'FAKE20',
  nativeCoin: 'FAKE',
  chainLogo: 'ethereum.svg',
  tokenLogo: 'usdt.svg',
  estimatedFeeUsd: '0.01',
  estimatedConfirmationSeconds: 3,
  tagline: 'USDT on a chain only the tests run',
  network: 'FAKE',
  endpoints: {
    test: { rpcUrl: 'http://127.0.0.1:9', usdtContract: undefined },
    live: { rpcUrl: 'http://127.0.0.1:9', usdtContract: undefined },
  },
  pollMs: 200,
  blockSeconds: 1,
  chainIds: { test: 31_337, live: 31_337 },
};
