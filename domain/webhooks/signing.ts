import { createHmac, randomBytes } from 'node:crypto';

/**
 * Standard Webhooks signing (https://www.standardwebhooks.com): the secret is `whsec_` plus the
 * base64 of the key bytes; the signature is `v1,` + base64(HMAC-SHA256(key, "{id}.{ts}.{body}")).
 * Several signatures travel space-separated in one header, which is how a rolled secret and
 * its predecessor both sign during the overlap window.
 */
export const secretPrefix = 'whsec_';

/** 24 random bytes, the size Svix and the Standard Webhooks reference libraries generate. */
export function generateWebhookSecret(): string {
  return `${secretPrefix}${randomBytes(24).toString('base64')}`;
}

export function secretKeyBytes(secret: string): Buffer {
  if (!secret.startsWith(secretPrefix)) throw new Error('a webhook secret starts with whsec_');
  return Buffer.from(secret.slice(secretPrefix.length), 'base64');
}

export function signWebhook(secret: string, msgId: string, timestampSeconds: number, body: string): string {
  const mac = createHmac('sha256', secretKeyBytes(secret)).update(`${msgId}.${timestampSeconds}.${body}`).digest('base64');
  return `v1,${mac}`;
}

export interface WebhookHeaders {
  'webhook-id': string;
  'webhook-timestamp': string;
  'webhook-signature': string;
  'content-type': 'application/json';
}

/** The signed headers of one attempt; `secrets` lists the current secret first. */
export function webhookHeaders(secrets: readonly string[], msgId: string, timestampSeconds: number, body: string): WebhookHeaders {
  return {
    'webhook-id': msgId,
    'webhook-timestamp': String(timestampSeconds),
    'webhook-signature': secrets.map((s) => signWebhook(s, msgId, timestampSeconds, body)).join(' '),
    'content-type': 'application/json',
  };
}
