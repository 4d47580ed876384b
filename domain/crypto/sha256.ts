import * as crypto from 'node:crypto';

/** SHA-256 of a text in base64url: one call where Node has `crypto.hash` (20.12 and later), else a Hash object. */
export const sha256Base64url: (text: string) => string = typeof crypto.hash === 'function'
  ? (text) => crypto.hash('sha256', text, 'base64url')
  : (text) => crypto.createHash('sha256').update(text).digest('base64url');
