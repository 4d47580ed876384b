import { readFileSync } from 'node:fs';
import { randomBytes } from 'node:crypto';
import { BIP32Factory } from 'bip32';
import { sql } from 'slonik';
import * as ecc from 'tiny-secp256k1';
import type { Environment } from '../../domain/environment.js';
import type { Stack } from './stack.js';

const hd = JSON.parse(readFileSync(new URL('../fixtures/hd/abandon-about.json', import.meta.url), 'utf8')) as {
  chains: { chain: 'evm' | 'tron'; accountXpub: string }[];
};

/** Account xpubs of the BIP39 test mnemonic (abandon … about): public reference data. */
export const evmXpub = hd.chains.find((c) => c.chain === 'evm')!.accountXpub;
export const tronXpub = hd.chains.find((c) => c.chain === 'tron')!.accountXpub;
export const solanaWallet = '9WzDXwBbmkg8ZTbNMqUxvQRAyrZzDsGYdLVL9zYtAWWM';

const bip32 = BIP32Factory(ecc);

/** Fresh account xpubs (EVM m/44'/60'/0', TRON m/44'/195'/0') from a random seed: no two stores share addresses. */
export function randomAccountXpubs(): { evm: string; tron: string } {
  const root = bip32.fromSeed(randomBytes(32));
  return {
    evm: root.derivePath("m/44'/60'/0'").neutered().toBase58(),
    tron: root.derivePath("m/44'/195'/0'").neutered().toBase58(),
  };
}

/**
 * Gives a store every rail in one environment by writing its connections, as the registration
 * endpoints would (they are tested on their own). The M-Pesa credentials here are placeholders
 * that no operator call ever reads.
 */
export async function connectAllRails(
  stack: Stack,
  storeId: string,
  env: Environment = 'test',
  xpubs: { evm: string; tron: string } = randomAccountXpubs(),
): Promise<{ evm: string; tron: string }> {
  await stack.pool.query(sql.unsafe`INSERT INTO store_wallets (store_id, environment, kind, public_key)
    VALUES (${storeId}, ${env}, 'evm', ${xpubs.evm}), (${storeId}, ${env}, 'tron', ${xpubs.tron}), (${storeId}, ${env}, 'solana', ${solanaWallet})
    ON CONFLICT DO NOTHING`);
  await stack.pool.query(sql.unsafe`INSERT INTO mobile_money_connections
    (store_id, environment, shortcode, consumer_key_enc, consumer_secret_enc, passkey_enc)
    VALUES (${storeId}, ${env}, '174379', 'unused', 'unused', 'unused') ON CONFLICT DO NOTHING`);
  return xpubs;
}
