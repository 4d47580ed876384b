import { createHash, timingSafeEqual } from 'node:crypto';
import type { Environment } from './environment.js';
import { randomToken } from './ids.js';

/**
 * Secret keys look like `<prefix>_test_<40 chars>`; publishable keys `pk_test_<32 chars>`.
 * Only the SHA-256 of a secret key is stored; the last four characters are kept for display.
 */
export type KeyKind = 'secret' | 'publishable';

export interface ParsedKey {
  kind: KeyKind;
  environment: Environment;
}

export function generateSecretKey(prefix: string, environment: Environment): string {
  return `${prefix}_${environment}_${randomToken(40)}`;
}

export function generatePublishableKey(environment: Environment): string {
  return `pk_${environment}_${randomToken(32)}`;
}

/** Reads kind and environment from a key's shape, or null when the shape is not a key of ours. */
export function parseKeyShape(prefix: string, key: string): ParsedKey | null {
  const m = /^([a-z]+)_(test|live)_([0-9a-z]{16,64})$/.exec(key);
  if (!m) return null;
  const environment = m[2] as Environment;
  if (m[1] === prefix) return { kind: 'secret', environment };
  if (m[1] === 'pk') return { kind: 'publishable', environment };
  return null;
}

export function hashSecretKey(key: string): Buffer {
  return createHash('sha256').update(key, 'utf8').digest();
}

/** Constant-time comparison of two key hashes of equal length. */
export function hashesEqual(a: Buffer, b: Buffer): boolean {
  return a.length === b.length && timingSafeEqual(a, b);
}

export function generateKey(kind: KeyKind, prefix: string, environment: Environment): string {
  return kind === 'secret' ? generateSecretKey(prefix, environment) : generatePublishableKey(environment);
}

/** What a list shows of a key: `sk_test_` or `pk_live_`, before the last four characters. */
export function keyDisplayPrefix(kind: KeyKind, prefix: string, environment: Environment): string {
  return kind === 'secret' ? `${prefix}_${environment}_` : `pk_${environment}_`;
}

/**
 * A roll's grace period: how long the old key keeps working next to the new one, time to deploy
 * the new key. The default is a day; a week at most, so an old key cannot linger; 0 stops it now.
 */
export const defaultRollGraceHours = 24;
export const maxRollGraceHours = 168;

/** Keys of one kind that work and have not been rolled, per store and environment. */
export const maxActiveKeysPerKind = 20;
