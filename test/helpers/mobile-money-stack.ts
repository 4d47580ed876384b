import { afterAll, beforeAll } from '@jest/globals';
import type { CreatedStore } from '../../db/store-repo.js';
import { formatKeyEntry, generateKey } from '../../domain/crypto/credentials.js';
import { startDarajaEmulator, type DarajaEmulator } from '../../emulators/daraja/server.js';
import type { EmulatorMerchant } from '../../emulators/daraja/state.js';
import { startStack, type Stack } from './stack.js';

export interface MobileMoneyStack {
  daraja: DarajaEmulator;
  stack: Stack;
  store: CreatedStore;
  /** The store's test secret key. */
  key: string;
}

/**
 * The M-Pesa suites' common start: the Daraja emulator delivering its callbacks to a whole stack
 * (real PostgreSQL and Temporal) with encrypted credentials, and one store. Registers the suite's
 * beforeAll and afterAll; the object is filled once beforeAll ran.
 */
export function mobileMoneyStack(merchants: EmulatorMerchant[], storeName: string, env: Record<string, string> = {}): MobileMoneyStack {
  const ctx = {} as MobileMoneyStack;
  beforeAll(async () => {
    ctx.daraja = await startDarajaEmulator({ merchants, deliverVia: (u) => new URL(u.pathname, ctx.stack.baseUrl) });
    ctx.stack = await startStack({ MPESA_SANDBOX_URL: ctx.daraja.url, ENCRYPTION_KEY: formatKeyEntry(generateKey()), ...env });
    ctx.store = await ctx.stack.createStore(storeName);
    ctx.key = ctx.store.keys.test.secretKey;
  }, 60_000);
  afterAll(async () => {
    await ctx.stack?.stop();
    await ctx.daraja?.close();
  });
  return ctx;
}
