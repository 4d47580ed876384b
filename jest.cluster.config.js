/**
 * `npm run test:cluster`: the production topology's run. The same jest setup as `npm test`, but
 * Temporal is the pinned server on PostgreSQL (a fresh pair of databases per run) with its UI
 * server, instead of the dev server; it runs the payment-link, M-Pesa, on-chain and webhook
 * integration tests, and test/cluster/ (API and worker processes, as `npm run start:cluster` runs them).
 */
import base from './jest.config.js';

export const clusterSubset = [
  'test/integration/payment-link-workflow.test.ts',
  'test/integration/payment-links.test.ts',
  'test/integration/mpesa-pay.test.ts',
  'test/integration/mpesa-lost-callback.test.ts',
  'test/integration/mpesa-daraja-outage.test.ts',
  'test/integration/chain-watcher-evm.test.ts',
  'test/integration/chain-watcher-tron.test.ts',
  'test/integration/chain-watcher-solana.test.ts',
  'test/integration/invoices.test.ts',
  'test/integration/webhook-payment-link.test.ts',
  'test/integration/webhook-delivery.test.ts',
  'test/integration/webhook-worker-kill.test.ts',
  'test/integration/webhook-manual-retry.test.ts',
  'test/cluster/*.test.ts',
];

export default {
  ...base,
  testMatch: clusterSubset.map((p) => `<rootDir>/${p}`),
  testPathIgnorePatterns: ['/node_modules/'],
  globalSetup: '<rootDir>/test/helpers/cluster-global-setup.mjs',
  globalTeardown: '<rootDir>/test/helpers/cluster-global-teardown.mjs',
};
