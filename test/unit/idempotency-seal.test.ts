import { describe, expect, it } from '@jest/globals';
import { resealBody, sealBody, sealedFieldSlot, unsealBody } from '../../api/plugins/idempotency-seal.js';
import { CredentialCryptoError, credentialKeyId, generateKey, keyringOf } from '../../domain/crypto/credentials.js';

const k1 = generateKey('k1');
const k2 = generateKey('k2');
const ref = { storeId: 'cli_store1', environment: 'test', key: 'order-42' };
const body = { id: 'we_1', secret: 'whsec_c2VjcmV0IGJ5dGVzIGZvciB0aGUgdGVzdA==', status: 'enabled' };

describe('sealed idempotency records', () => {
  it('keeps declared string fields only as ciphertext and gives the same body back', () => {
    const stored = sealBody(keyringOf([k1]), ref, body, ['secret']) as Record<string, any>;
    expect(stored).toEqual({ id: 'we_1', status: 'enabled', $sealed: { secret: expect.stringMatching(/^v1:k1:/) } });
    expect(JSON.stringify(stored)).not.toContain('c2VjcmV0');
    expect(unsealBody(keyringOf([k1]), ref, stored)).toEqual(body);
  });

  it('leaves bodies without the fields (errors) and undeclared fields as they are', () => {
    const error = { error: { type: 'invalid_request_error', code: 'invalid_field', message: 'x', requestId: 'r' } };
    expect(sealBody(keyringOf([k1]), ref, error, ['secret'])).toBe(error);
    expect(sealBody(keyringOf([k1]), ref, body, [])).toBe(body);
    expect(sealBody(keyringOf([k1]), ref, { secret: null }, ['secret'])).toEqual({ secret: null });
    expect(unsealBody(keyringOf([k1]), ref, error)).toBe(error);
  });

  it('binds each value to its store, environment, key and field', () => {
    const stored = sealBody(keyringOf([k1]), ref, body, ['secret']);
    for (const other of [{ ...ref, key: 'order-43' }, { ...ref, storeId: 'cli_store2' }, { ...ref, environment: 'live' }]) {
      expect(() => unsealBody(keyringOf([k1]), other, stored)).toThrow(CredentialCryptoError);
    }
    expect(sealedFieldSlot(ref, 'secret').field).not.toContain('order-42');
  });

  it('moves to the current key on rotation, and says when nothing needs doing', () => {
    const stored = sealBody(keyringOf([k1]), ref, body, ['secret']);
    const rotating = keyringOf([k2, k1]);
    const moved = resealBody(rotating, ref, stored) as Record<string, any>;
    expect(credentialKeyId(moved.$sealed.secret)).toBe('k2');
    expect(unsealBody(keyringOf([k2]), ref, moved)).toEqual(body);
    expect(resealBody(rotating, ref, moved)).toBeNull();
    expect(resealBody(rotating, ref, body)).toBeNull();
  });
});
