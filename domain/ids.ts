import { randomBytes } from 'node:crypto';

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
} as const;

export type IdKind = keyof typeof idPrefixes;

const alphabet = '0123456789abcdefghijklmnopqrstuvwxyz';

export function randomToken(length: number): string {
  const bytes = randomBytes(length);
  let out = '';
  for (let i = 0; i < length; i++) out += alphabet[bytes[i]! % 36];
  return out;
}

export function newId(kind: IdKind): string {
  return `${idPrefixes[kind]}_${randomToken(24)}`;
}

export function isId(kind: IdKind, value: string): boolean {
  return new RegExp(`^${idPrefixes[kind]}_[0-9a-z]{24}$`).test(value);
}
