import { createHash, randomBytes } from 'node:crypto';

/**
 * Prefixed, URL-safe identifiers (`pl_…`, `inv_…`, `evt_…`). 16 random bytes in base62-like
 * lowercase alphanumerics: unguessable, so a public id (a checkout link) reveals nothing else.
 */
export const idPrefixes = {
  store: 'cli',
  apiKey: 'key',
  paymentLink: 'pl',
  invoice: 'inv',
  event: 'evt',
  webhookEndpoint: 'we',
  webhookDelivery: 'wd',
  request: 'req',
  dashboardUser: 'usr',
  reconciliationFinding: 'rcf',
  sweepDestination: 'sdst',
  sweepPlan: 'swp',
} as const;

export type IdKind = keyof typeof idPrefixes;

const alphabet = '0123456789abcdefghijklmnopqrstuvwxyz';

/** `length` characters of the alphabet from `bytes` starting at `at`, one byte each. */
function tokenFrom(bytes: Uint8Array, at: number, length: number): string {
  let out = '';
  for (let i = at; i < at + length; i++) out += alphabet[bytes[i]! % 36];
  return out;
}

export function randomToken(length: number): string {
  return tokenFrom(randomBytes(length), 0, length);
}

export function newId(kind: IdKind): string {
  return `${idPrefixes[kind]}_${randomToken(24)}`;
}

let pool = Buffer.alloc(0);
let poolAt = 0;

/**
 * An id of `newId`'s shape whose random bytes come from a pool drawn 6 KB at a time: one call
 * into the system's generator per 256 ids. For ids made on every request (request ids), never for
 * a secret.
 */
export function newPooledId(kind: IdKind): string {
  if (poolAt + 24 > pool.length) {
    pool = randomBytes(24 * 256);
    poolAt = 0;
  }
  poolAt += 24;
  return `${idPrefixes[kind]}_${tokenFrom(pool, poolAt - 24, 24)}`;
}

export function isId(kind: IdKind, value: string): boolean {
  return new RegExp(`^${idPrefixes[kind]}_[0-9a-z]{24}$`).test(value);
}

/**
 * An id of the same shape as `newId`, fixed by `seed` (SHA-256 of it): the same seed always names
 * the same thing, so a retried step finds what an earlier try of it wrote.
 */
export function derivedId(kind: IdKind, seed: string): string {
  return `${idPrefixes[kind]}_${tokenFrom(createHash('sha256').update(seed).digest(), 0, 24)}`;
}
