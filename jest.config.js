/** Jest runs the TypeScript sources as native ESM, transformed by SWC (no type checking: `npm run typecheck`). */
export default {
  testEnvironment: 'node',
  extensionsToTreatAsEsm: ['.ts'],
  transform: {
    '^.+\\.ts$': ['@swc/jest', { jsc: { parser: { syntax: 'typescript' }, target: 'es2022' }, module: { type: 'es6' } }],
  },
  moduleNameMapper: { '^(\\.{1,2}/.*)\\.js$': '$1', '^p-limit$': '<rootDir>/test/helpers/cjs/p-limit.cjs' },
  testMatch: ['<rootDir>/test/**/*.test.ts'],
  testPathIgnorePatterns: ['/node_modules/', '<rootDir>/test/cluster/', '<rootDir>/test/chaos/'], // `npm run test:cluster` and `npm run test:chaos` run those
  globalSetup: '<rootDir>/test/helpers/global-setup.mjs',
  globalTeardown: '<rootDir>/test/helpers/global-teardown.mjs',
  // Hooks start whole stacks (PostgreSQL database, workers, API); on a 2-core machine shared with other
  // builds a start took over 60 s. No test waits on time for a result: a longer limit only spares a busy host.
  testTimeout: 120_000,
  maxWorkers: 3,
  // A worker's heap grows file after file (each file's modules, stacks and browsers); at 2-4 GB its
  // full collections took seconds and the memory test that forces them (reports-export-memory) ran
  // for minutes. A worker above this after a file is replaced by a fresh one.
  workerIdleMemoryLimit: '1536MB',
};
