import type { RailAdapter } from '../payment-method.js';
import { solanaMethod } from './method.js';
import { scanSolanaTick } from './scan-tick.js';
import { solanaView } from './view.js';

/** Solana's adapter: its rules (method.ts) and the reference scanner. Balances are not read and the reconciler does not cover it yet. */
export const solanaAdapter: RailAdapter = {
  ...solanaMethod,
  // Solana Pay links are paid to the store's own wallet address, told apart by reference keys.
  treasury: { kind: 'none', reason: "Payments arrive in the merchant's own wallet (Solana Pay references): nothing to sweep." },
  scanTick: (ctx, _rail, environment, cursor, nowMs) =>
    scanSolanaTick(ctx.pool, solanaView(ctx.rails, environment, ctx.logger), ctx.watchSet('sol_ref', environment), cursor, nowMs),
};
