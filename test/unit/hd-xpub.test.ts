import { describe, expect, it } from '@jest/globals';
import bs58 from 'bs58';
import { createHash } from 'node:crypto';
import { deriveChildXpub } from '../../domain/hd/derive.js';
import { deriveAddress } from '../../rails/chain/derive-address.js';
import { validateAccountXpub, XpubError } from '../../domain/hd/xpub.js';

const evmXpub = 'xpub6DCoCpSuQZB2jawqnGMEPS63ePKWkwWPH4TU45Q7LPXWuNd8TMtVxRrgjtEshuqpK3mdhaWHPFsBngh5GFZaM6si3yZdUsT8ddYM3PwnATt';
const sha256 = (b: Uint8Array) => createHash('sha256').update(b).digest();

/** The same key under other version bytes, with a correct checksum (SLIP-132 re-labelling). */
function reversion(xpub: string, version: number): string {
  const payload = Buffer.from(bs58.decode(xpub).subarray(0, 78));
  payload.writeUInt32BE(version, 0);
  return bs58.encode(Buffer.concat([payload, sha256(sha256(payload)).subarray(0, 4)]));
}

function refusal(input: string, kind: 'evm' | 'tron' = 'evm'): string {
  try {
    validateAccountXpub(input, kind);
  } catch (err) {
    expect(err).toBeInstanceOf(XpubError);
    return (err as Error).message;
  }
  throw new Error(`accepted: ${input}`);
}

describe('account xpub validation', () => {
  it('accepts an account xpub and trims copy-paste whitespace', () => {
    expect(validateAccountXpub(`  ${evmXpub}\n`, 'evm')).toEqual({ xpub: evmXpub, depth: 3 });
  });

  it('refuses private keys without echoing them', () => {
    const xprv = 'xprv9s21ZrQH143K3QTDL4LXw2F7HEK3wJUD2nW2nRk4stbPy6cq3jPPqjiChkVvvNKmPGJxWUtg6LnF5kejMRNNU3TGtRBeJgk33yuGBxrMPHi';
    const message = refusal(xprv);
    expect(message).toMatch(/This is a private key \(xprv\)\. Never share it/);
    expect(message).not.toContain(xprv);
    expect(refusal(reversion(evmXpub, 0x04358394))).toMatch(/private key \(tprv\)/);
    expect(refusal(reversion(evmXpub, 0x04b2430c))).toMatch(/private key \(zprv\)/);
  });

  it('refuses tpub, ypub and zpub, saying why and what to export', () => {
    expect(refusal(reversion(evmXpub, 0x043587cf))).toMatch(/^tpub keys are not accepted: EVM and TRON wallets use xpub version bytes on every network.*m\/44'\/60'\/0'/);
    expect(refusal(reversion(evmXpub, 0x049d7cb2))).toMatch(/^ypub keys are not accepted: ypub is a Bitcoin SegWit format/);
    // BIP84's published account zpub of the abandon…about mnemonic (m/84'/0'/0').
    const zpub = 'zpub6rFR7y4Q2AijBEqTUquhVz398htDFrtymD9xYYfG1m4wAcvPhXNfE3EfH1r1ADqtfSdVCToUG868RvUUkgDKf31mGDtKsAYz2oz2AGutZYs';
    expect(refusal(zpub, 'tron')).toMatch(/^zpub keys are not accepted.*m\/44'\/195'\/0'/);
  });

  it('refuses keys at the wrong depth', () => {
    const abandonMaster = 'xpub661MyMwAqRbcFkPHucMnrGNzDwb6teAX1RbKQmqtEF8kK3Z7LZ59qafCjB9eCRLiTVG3uxBxgKvRgbubRhqSKXnGGb1aoaqLrpMBDrVxga8';
    expect(refusal(abandonMaster)).toMatch(/a master key \(depth 0\).*the account-level key has depth 3/);
    expect(refusal(deriveChildXpub(evmXpub, 0))).toMatch(/a branch key \(depth 4, m\/44'\/60'\/0'\/0\)/);
    // BIP32 vector 2, m/0/2147483647H/1/2147483646H: depth 4, hardened.
    expect(refusal('xpub6ERApfZwUNrhLCkDtcHTcxd75RbzS1ed54G1LkBUHQVHQKqhMkhgbmJbZRkrgZw4koxb5JaHWkY4ALHY2grBGRjaDMzQLcgJvLJuZZvRcEL')).toMatch(/depth 4/);
    // BIP32 vector 1, m/0H: depth 1.
    expect(refusal('xpub68Gmy5EdvgibQVfPdqkBBCHxA5htiqg55crXYuXoQRKfDBFA1WEjWgP6LHhwBZeNK1VTsfTFUHCdrfp1bgwQ9xv5ski8PX9rL2dZXvgGDnw')).toMatch(/at depth 1/);
  });

  it('refuses a depth-3 key whose last step is not hardened', () => {
    // BIP32 vector 2, m/0/2147483647H/1.
    expect(refusal('xpub6DF8uhdarytz3FWdA8TvFSvvAh8dP3283MY7p2V4SeE2wyWmG5mg5EwVvmdMVCQcoNJxGoWaU9DCWh89LojfZ537wTfunKau47EL2dhHKon')).toMatch(
      /derived without hardening/,
    );
  });

  it('refuses a bad checksum and malformed strings', () => {
    const lastFlipped = evmXpub.slice(0, -1) + (evmXpub.endsWith('t') ? 'u' : 't');
    expect(refusal(lastFlipped)).toMatch(/checksum is wrong/);
    const middleFlipped = evmXpub.slice(0, 50) + (evmXpub[50] === 'a' ? 'b' : 'a') + evmXpub.slice(51);
    expect(refusal(middleFlipped)).toMatch(/checksum is wrong/);
    expect(refusal('')).toMatch(/is empty/);
    expect(refusal('   ')).toMatch(/is empty/);
    expect(refusal(evmXpub.slice(0, 100))).toMatch(/decodes to \d+ bytes, not 82/);
    expect(refusal('xpub0OIl')).toMatch(/not valid base58/);
    expect(refusal(`${evmXpub.slice(0, 40)} ${evmXpub.slice(40)}`)).toMatch(/not valid base58/);
    expect(refusal('0x9858EfFD232B4033E47d90003D41EC34EcaEda94')).toMatch(/not valid base58/);
    expect(refusal('TUEZSdKsoDHQMeZwihtdoBiN46zxhGWYdH')).toMatch(/decodes to 25 bytes/);
  });

  // BIP32 test vector 5: extended keys that must be rejected, with the BIP's reason.
  const vector5: [string, string, RegExp][] = [
    ['pubkey version / prvkey mismatch', 'xpub661MyMwAqRbcEYS8w7XLSVeEsBXy79zSzH1J8vCdxAZningWLdN3zgtU6LBpB85b3D2yc8sfvZU521AAwdZafEz7mnzBBsz4wKY5fTtTQBm', /depth 0/],
    ['prvkey version / pubkey mismatch', 'xprv9s21ZrQH143K24Mfq5zL5MhWK9hUhhGbd45hLXo2Pq2oqzMMo63oStZzFGTQQD3dC4H2D5GBj7vWvSQaaBv5cxi9gafk7NF3pnBju6dwKvH', /private key/],
    ['invalid pubkey prefix 04', 'xpub661MyMwAqRbcEYS8w7XLSVeEsBXy79zSzH1J8vCdxAZningWLdN3zgtU6Txnt3siSujt9RCVYsx4qHZGc62TG4McvMGcAUjeuwZdduYEvFn', /depth 0/],
    ['invalid prvkey prefix 04', 'xprv9s21ZrQH143K24Mfq5zL5MhWK9hUhhGbd45hLXo2Pq2oqzMMo63oStZzFGpWnsj83BHtEy5Zt8CcDr1UiRXuWCmTQLxEK9vbz5gPstX92JQ', /private key/],
    ['invalid pubkey prefix 01', 'xpub661MyMwAqRbcEYS8w7XLSVeEsBXy79zSzH1J8vCdxAZningWLdN3zgtU6N8ZMMXctdiCjxTNq964yKkwrkBJJwpzZS4HS2fxvyYUA4q2Xe4', /depth 0/],
    ['invalid prvkey prefix 01', 'xprv9s21ZrQH143K24Mfq5zL5MhWK9hUhhGbd45hLXo2Pq2oqzMMo63oStZzFAzHGBP2UuGCqWLTAPLcMtD9y5gkZ6Eq3Rjuahrv17fEQ3Qen6J', /private key/],
    ['zero depth with non-zero parent fingerprint', 'xprv9s2SPatNQ9Vc6GTbVMFPFo7jsaZySyzk7L8n2uqKXJen3KUmvQNTuLh3fhZMBoG3G4ZW1N2kZuHEPY53qmbZzCHshoQnNf4GvELZfqTUrcv', /private key/],
    ['zero depth with non-zero parent fingerprint', 'xpub661no6RGEX3uJkY4bNnPcw4URcQTrSibUZ4NqJEw5eBkv7ovTwgiT91XX27VbEXGENhYRCf7hyEbWrR3FewATdCEebj6znwMfQkhRYHRLpJ', /depth 0/],
    ['zero depth with non-zero index', 'xprv9s21ZrQH4r4TsiLvyLXqM9P7k1K3EYhA1kkD6xuquB5i39AU8KF42acDyL3qsDbU9NmZn6MsGSUYZEsuoePmjzsB3eFKSUEh3Gu1N3cqVUN', /private key/],
    ['zero depth with non-zero index', 'xpub661MyMwAuDcm6CRQ5N4qiHKrJ39Xe1R1NyfouMKTTWcguwVcfrZJaNvhpebzGerh7gucBvzEQWRugZDuDXjNDRmXzSZe4c7mnTK97pTvGS8', /depth 0/],
    ['unknown extended key version', 'DMwo58pR1QLEFihHiXPVykYB6fJmsTeHvyTp7hRThAtCX8CvYzgPcn8XnmdfHGMQzT7ayAmfo4z3gY5KfbrZWZ6St24UVf2Qgo6oujFktLHdHY4', /Unknown extended key version/],
    ['unknown extended key version', 'DMwo58pR1QLEFihHiXPVykYB6fJmsTeHvyTp7hRThAtCX8CvYzgPcn8XnmdfHPmHJiEDXkTiJTVV9rHEBUem2mwVbbNfvT2MTcAqj3nesx8uBf9', /Unknown extended key version/],
    ['private key 0 not in 1..n-1', 'xprv9s21ZrQH143K24Mfq5zL5MhWK9hUhhGbd45hLXo2Pq2oqzMMo63oStZzF93Y5wvzdUayhgkkFoicQZcP3y52uPPxFnfoLZB21Teqt1VvEHx', /private key/],
    ['private key n not in 1..n-1', 'xprv9s21ZrQH143K24Mfq5zL5MhWK9hUhhGbd45hLXo2Pq2oqzMMo63oStZzFAzHGBP2UuGCqWLTAPLcMtD5SDKr24z3aiUvKr9bJpdrcLg1y3G', /private key/],
    ['invalid pubkey 02…07', 'xpub661MyMwAqRbcEYS8w7XLSVeEsBXy79zSzH1J8vCdxAZningWLdN3zgtU6Q5JXayek4PRsn35jii4veMimro1xefsM58PgBMrvdYre8QyULY', /depth 0/],
    ['invalid checksum', 'xprv9s21ZrQH143K3QTDL4LXw2F7HEK3wJUD2nW2nRk4stbPy6cq3jPPqjiChkVvvNKmPGJxWUtg6LnF5kejMRNNU3TGtRBeJgk33yuGBxrMPHL', /checksum is wrong/],
  ];
  it.each(vector5)('BIP32 vector 5: %s', (_reason, key, message) => {
    expect(refusal(key)).toMatch(message);
  });

  // Vector 5's key-data faults sit on master keys, which the depth rule refuses first; moved to
  // depth 3 (same key data, account depth and a hardened index) the key-data checks must catch them.
  it.each([
    ['pubkey version / prvkey mismatch', 'xpub661MyMwAqRbcEYS8w7XLSVeEsBXy79zSzH1J8vCdxAZningWLdN3zgtU6LBpB85b3D2yc8sfvZU521AAwdZafEz7mnzBBsz4wKY5fTtTQBm', /not a compressed public key \(it starts with 0x00\)/],
    ['invalid pubkey prefix 04', 'xpub661MyMwAqRbcEYS8w7XLSVeEsBXy79zSzH1J8vCdxAZningWLdN3zgtU6Txnt3siSujt9RCVYsx4qHZGc62TG4McvMGcAUjeuwZdduYEvFn', /starts with 0x04/],
    ['invalid pubkey prefix 01', 'xpub661MyMwAqRbcEYS8w7XLSVeEsBXy79zSzH1J8vCdxAZningWLdN3zgtU6N8ZMMXctdiCjxTNq964yKkwrkBJJwpzZS4HS2fxvyYUA4q2Xe4', /starts with 0x01/],
    ['invalid pubkey 02…07', 'xpub661MyMwAqRbcEYS8w7XLSVeEsBXy79zSzH1J8vCdxAZningWLdN3zgtU6Q5JXayek4PRsn35jii4veMimro1xefsM58PgBMrvdYre8QyULY', /not a point on the secp256k1 curve/],
  ])('BIP32 vector 5 key data at account depth: %s', (_reason, key, message) => {
    const payload = Buffer.from(bs58.decode(key).subarray(0, 78));
    payload[4] = 3;
    payload.writeUInt32BE(0x80000000, 9);
    const atDepth3 = bs58.encode(Buffer.concat([payload, sha256(sha256(payload)).subarray(0, 4)]));
    expect(refusal(atDepth3)).toMatch(message);
  });
});

describe('derivation index rules', () => {
  it.each([-1, 1.5, Number.NaN, Number.POSITIVE_INFINITY, 2 ** 31, 2 ** 32, '1' as unknown as number])('refuses index %p', (index) => {
    expect(() => deriveAddress(evmXpub, 'evm', 0, index)).toThrow(
      /index must be an integer from 0 to 2147483647 \(hardened indexes, 2\^31 and above, need the private key\)/,
    );
  });
});
