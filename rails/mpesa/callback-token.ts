import { createHash, timingSafeEqual } from 'node:crypto';
import { randomToken } from '../../domain/ids.js';

/** A prompt's callback token: the unguessable last segment of the CallBackURL given to Daraja. */
export function newCallbackToken(): string {
  return randomToken(40);
}

/** What the database keeps of a callback token: its SHA-256, never the token. */
export function hashCallbackToken(token: string): Buffer {
  return createHash('sha256').update(token, 'utf8').digest();
}

/** Constant-time comparison of two token hashes. */
export function sameTokenHash(a: Buffer, b: Buffer): boolean {
  return a.length === b.length && timingSafeEqual(a, b);
}
