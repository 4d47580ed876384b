import { expect } from '@jest/globals';
import type { Stack } from './stack.js';

/**
 * The authentication cases every secret-key route must pass: no key, a malformed key, an
 * unknown key and a publishable key. Each answers with the error body and changes nothing.
 */
export async function expectSecretKeyRequired(
  stack: Stack,
  route: { method: 'GET' | 'POST' | 'PUT' | 'DELETE'; url: string; payload?: unknown },
): Promise<void> {
  const store = await stack.createStore('Auth cases');
  const cases: [string | undefined, number, string][] = [
    [undefined, 401, 'missing_api_key'],
    ['not-a-key', 401, 'invalid_api_key'],
    [`${stack.config.keyPrefix}_test_${'0'.repeat(40)}`, 401, 'invalid_api_key'],
    [store.keys.test.publishableKey, 403, 'wrong_key_kind'],
  ];
  for (const [key, status, code] of cases) {
    const res = await stack.request({ method: route.method, url: route.url, payload: route.payload as never, key });
    expect({ key, status: res.status, code: res.body?.error?.code }).toEqual({ key, status, code });
    expect(res.body.error.type).toBe(status === 401 ? 'authentication_error' : 'permission_error');
    expect(typeof res.body.error.requestId).toBe('string');
    if (key) expect(JSON.stringify(res.body)).not.toContain(key);
  }
}
