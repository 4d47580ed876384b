/**
 * `npm run test:chaos`: faults, load, hostile input and the secret scan (test/chaos/). One
 * scenario at a time (they kill processes and load the machine); each records counts, and the
 * global teardown prints one summary table. `CHAOS_PROFILE=ci` runs the documented CI subset.
 */
import base from './jest.config.js';

export default {
  ...base,
  testMatch: ['<rootDir>/test/chaos/**/*.test.ts'],
  testPathIgnorePatterns: ['/node_modules/'],
  globalSetup: '<rootDir>/test/chaos/harness/global-setup.mjs',
  globalTeardown: '<rootDir>/test/chaos/harness/global-teardown.mjs',
  testTimeout: 30 * 60_000,
  maxWorkers: 1,
};
