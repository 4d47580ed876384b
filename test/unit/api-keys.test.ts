import { describe, expect, it } from '@jest/globals';
import { generatePublishableKey, generateSecretKey, hashSecretKey, hashesEqual, parseKeyShape } from '../../domain/api-keys.js';

describe('API keys', () => {
  it('infers kind and environment from the prefix', () => {
    expect(parseKeyShape('sk', generateSecretKey('sk', 'test'))).toEqual({ kind: 'secret', environment: 'test' });
    expect(parseKeyShape('sk', generateSecretKey('sk', 'live'))).toEqual({ kind: 'secret', environment: 'live' });
    expect(parseKeyShape('sk', generatePublishableKey('live'))).toEqual({ kind: 'publishable', environment: 'live' });
    expect(parseKeyShape('mlp', generateSecretKey('mlp', 'test'))).toEqual({ kind: 'secret', environment: 'test' });
  });

  it('rejects other prefixes and shapes', () => {
    expect(parseKeyShape('sk', generateSecretKey('rk', 'test'))).toBeNull();
    expect(parseKeyShape('sk', 'sk_prod_abcdefabcdefabcdef')).toBeNull();
    expect(parseKeyShape('sk', 'sk_test_short')).toBeNull();
    expect(parseKeyShape('sk', 'sk_test_UPPERCASEUPPERCASEUPPER')).toBeNull();
  });

  it('hashes deterministically and compares in constant time', () => {
    const k = generateSecretKey('sk', 'test');
    expect(hashesEqual(hashSecretKey(k), hashSecretKey(k))).toBe(true);
    expect(hashesEqual(hashSecretKey(k), hashSecretKey(`${k}x`))).toBe(false);
    expect(hashSecretKey(k).toString('hex')).not.toContain(k);
  });
});
