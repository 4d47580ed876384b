import { describe, expect, it } from '@jest/globals';
import { readFileSync } from 'node:fs';
import { BIP32Factory } from 'bip32';
import * as ecc from 'tiny-secp256k1';
import { derivePublicKey, deriveChildXpub, maxIndex, type Branch } from '../../domain/hd/derive.js';
import { deriveAddress } from '../../rails/chain/derive-address.js';
import { validateAccountXpub } from '../../domain/hd/xpub.js';

const fixture = JSON.parse(readFileSync(new URL('../fixtures/hd/abandon-about.json', import.meta.url), 'utf8'));

describe('HD derivation against the published abandon…about vectors', () => {
  for (const chain of fixture.chains as { chain: 'evm' | 'tron'; accountXpub: string; addresses: { index: number; address: string }[] }[]) {
    it(`derives the ${chain.chain} receive addresses`, () => {
      validateAccountXpub(chain.accountXpub, chain.chain);
      for (const { index, address } of chain.addresses) {
        expect(deriveAddress(chain.accountXpub, chain.chain, 0, index)).toBe(address);
      }
    });
  }

  // research/chains.md §1: computed by three independent implementations, incl. private derivation from the seed.
  const extra: [number, string, string][] = [
    [3, '0xF3f50213C1d2e255e4B2bAD430F8A38EEF8D718E', 'TRhVWK5XEDkQBDevcdCWW7RW51aRncty4W'],
    [19, '0x5096eEe90Aa1b783AF381669938C688F02bb43D8', 'TVVrjiM1MuVzeczUHzSAnmAipW7qAX2gRL'],
    [20, '0x0f7479EC9cB833971eE60A4B09d7E048f689029B', 'TQNiYx8GwBCA3C3Gk1jFi2x59dLH2dnqz6'],
    [1000, '0xaC2Dbb7Dc8Fa82F47021e01255fBD767a2Ec4EaD', 'TTsXdXbiYdVbcUh6LhWAh41wy4pv4abHbj'],
    [2147483647, '0x8848bfC75a28756B521b09afDC120BdDddC7d7c9', 'TVapZk5c7S7ARtSBi9jD13rhkbZke4F4sa'],
  ];
  it.each(extra)('index %i, up to the last non-hardened index', (index, evm, tron) => {
    const [evmChain, tronChain] = fixture.chains;
    expect(deriveAddress(evmChain.accountXpub, 'evm', 0, index)).toBe(evm);
    expect(deriveAddress(tronChain.accountXpub, 'tron', 0, index)).toBe(tron);
  });
});

/**
 * BIP32's own test vectors (bitcoin/bips bip-0032.mediawiki, vectors 1 and 2): every step that
 * public derivation can take, i.e. each non-hardened child from its parent's xpub.
 */
const bip32PublicSteps: { name: string; parent: string; index: number; child: string }[] = [
  {
    name: 'vector 1: m/0H → m/0H/1',
    parent: 'xpub68Gmy5EdvgibQVfPdqkBBCHxA5htiqg55crXYuXoQRKfDBFA1WEjWgP6LHhwBZeNK1VTsfTFUHCdrfp1bgwQ9xv5ski8PX9rL2dZXvgGDnw',
    index: 1,
    child: 'xpub6ASuArnXKPbfEwhqN6e3mwBcDTgzisQN1wXN9BJcM47sSikHjJf3UFHKkNAWbWMiGj7Wf5uMash7SyYq527Hqck2AxYysAA7xmALppuCkwQ',
  },
  {
    name: 'vector 1: m/0H/1/2H → m/0H/1/2H/2',
    parent: 'xpub6D4BDPcP2GT577Vvch3R8wDkScZWzQzMMUm3PWbmWvVJrZwQY4VUNgqFJPMM3No2dFDFGTsxxpG5uJh7n7epu4trkrX7x7DogT5Uv6fcLW5',
    index: 2,
    child: 'xpub6FHa3pjLCk84BayeJxFW2SP4XRrFd1JYnxeLeU8EqN3vDfZmbqBqaGJAyiLjTAwm6ZLRQUMv1ZACTj37sR62cfN7fe5JnJ7dh8zL4fiyLHV',
  },
  {
    name: 'vector 1: m/0H/1/2H/2 → m/0H/1/2H/2/1000000000',
    parent: 'xpub6FHa3pjLCk84BayeJxFW2SP4XRrFd1JYnxeLeU8EqN3vDfZmbqBqaGJAyiLjTAwm6ZLRQUMv1ZACTj37sR62cfN7fe5JnJ7dh8zL4fiyLHV',
    index: 1000000000,
    child: 'xpub6H1LXWLaKsWFhvm6RVpEL9P4KfRZSW7abD2ttkWP3SSQvnyA8FSVqNTEcYFgJS2UaFcxupHiYkro49S8yGasTvXEYBVPamhGW6cFJodrTHy',
  },
  {
    name: 'vector 2: m → m/0',
    parent: 'xpub661MyMwAqRbcFW31YEwpkMuc5THy2PSt5bDMsktWQcFF8syAmRUapSCGu8ED9W6oDMSgv6Zz8idoc4a6mr8BDzTJY47LJhkJ8UB7WEGuduB',
    index: 0,
    child: 'xpub69H7F5d8KSRgmmdJg2KhpAK8SR3DjMwAdkxj3ZuxV27CprR9LgpeyGmXUbC6wb7ERfvrnKZjXoUmmDznezpbZb7ap6r1D3tgFxHmwMkQTPH',
  },
  {
    name: 'vector 2: m/0/2147483647H → m/0/2147483647H/1',
    parent: 'xpub6ASAVgeehLbnwdqV6UKMHVzgqAG8Gr6riv3Fxxpj8ksbH9ebxaEyBLZ85ySDhKiLDBrQSARLq1uNRts8RuJiHjaDMBU4Zn9h8LZNnBC5y4a',
    index: 1,
    child: 'xpub6DF8uhdarytz3FWdA8TvFSvvAh8dP3283MY7p2V4SeE2wyWmG5mg5EwVvmdMVCQcoNJxGoWaU9DCWh89LojfZ537wTfunKau47EL2dhHKon',
  },
  {
    name: 'vector 2: m/0/2147483647H/1/2147483646H → …/2',
    parent: 'xpub6ERApfZwUNrhLCkDtcHTcxd75RbzS1ed54G1LkBUHQVHQKqhMkhgbmJbZRkrgZw4koxb5JaHWkY4ALHY2grBGRjaDMzQLcgJvLJuZZvRcEL',
    index: 2,
    child: 'xpub6FnCn6nSzZAw5Tw7cgR9bi15UV96gLZhjDstkXXxvCLsUXBGXPdSnLFbdpq8p9HmGsApME5hQTZ3emM2rnY5agb9rXpVGyy3bdW6EEgAtqt',
  },
];

describe("BIP32's published test vectors, public derivation", () => {
  it.each(bip32PublicSteps)('$name', ({ parent, index, child }) => {
    expect(deriveChildXpub(parent, index)).toBe(child);
  });

  it('chains two public steps: m/0H/1/2H → /2/1000000000', () => {
    const account = 'xpub6D4BDPcP2GT577Vvch3R8wDkScZWzQzMMUm3PWbmWvVJrZwQY4VUNgqFJPMM3No2dFDFGTsxxpG5uJh7n7epu4trkrX7x7DogT5Uv6fcLW5';
    expect(deriveChildXpub(deriveChildXpub(account, 2), 1000000000)).toBe(bip32PublicSteps[2]!.child);
  });

  it('refuses the hardened steps of the vectors, which need the private key', () => {
    const master = 'xpub661MyMwAqRbcFtXgS5sYJABqqG9YLmC4Q1Rdap9gSE8NqtwybGhePY2gZ29ESFjqJoCu1Rupje8YtGqsefD265TMg7usUDFdp6W1EGMcet8';
    expect(() => deriveChildXpub(master, 0x80000000)).toThrow(/hardened indexes, 2\^31 and above, need the private key/);
  });

  it('accepts vector 1 m/0H/1/2H as an account key (depth 3, hardened) and derives from it', () => {
    const account = 'xpub6D4BDPcP2GT577Vvch3R8wDkScZWzQzMMUm3PWbmWvVJrZwQY4VUNgqFJPMM3No2dFDFGTsxxpG5uJh7n7epu4trkrX7x7DogT5Uv6fcLW5';
    expect(validateAccountXpub(account, 'evm').depth).toBe(3);
    expect(deriveAddress(account, 'evm', 0, 0)).toMatch(/^0x[0-9a-fA-F]{40}$/);
  });
});

describe('the child step computed directly agrees with the bip32 package it replaced', () => {
  const bip32 = BIP32Factory(ecc);
  const accounts = [
    'xpub6D4BDPcP2GT577Vvch3R8wDkScZWzQzMMUm3PWbmWvVJrZwQY4VUNgqFJPMM3No2dFDFGTsxxpG5uJh7n7epu4trkrX7x7DogT5Uv6fcLW5',
    ...(fixture.chains as { accountXpub: string }[]).map((c) => c.accountXpub),
  ];
  it.each(accounts)('%s: both branches, the edges and random indexes', (account) => {
    const indexes = [0, 1, 2, 19, 20, 21, maxIndex - 1, maxIndex, ...Array.from({ length: 60 }, () => Math.floor(Math.random() * (maxIndex + 1)))];
    for (const branch of [0, 1] as Branch[]) {
      const node = bip32.fromBase58(account).derive(branch);
      for (const index of indexes) {
        const expected = Buffer.from(ecc.pointCompress(node.derive(index).publicKey, false).subarray(1)).toString('hex');
        expect({ branch, index, key: Buffer.from(derivePublicKey(account, branch, index)).toString('hex') }).toEqual({ branch, index, key: expected });
      }
    }
  });
});
