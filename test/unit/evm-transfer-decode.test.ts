import { describe, expect, it } from '@jest/globals';
import { randomBytes } from 'node:crypto';
import { decodeEventLog, encodeAbiParameters, encodeEventTopics, parseAbiItem, type Hex } from 'viem';
import { decodeTransferLogs, transferTopic, type RawLog } from '../../rails/evm/decode-transfers.js';
import { AddressBook, evmKey } from '../../rails/chain/address-book.js';
import { WatchSet } from '../../rails/chain/watch-set.js';
import { tronAddressFromBytes } from '../../rails/tron/address.js';

/** Transfer logs decoded by their fixed layout, checked against viem's ABI decoder. */
const transfer = parseAbiItem('event Transfer(address indexed from, address indexed to, uint256 value)');
const token = `0x${randomBytes(20).toString('hex')}` as Hex;
const hex = (n: number) => `0x${randomBytes(n).toString('hex')}` as Hex;

function rawLog(over: Partial<RawLog> = {}, value = BigInt(`0x${randomBytes(12).toString('hex')}`) + 1n): RawLog {
  const [sig, from, to] = encodeEventTopics({ abi: [transfer], eventName: 'Transfer', args: { from: hex(20), to: hex(20) } });
  return {
    address: token, topics: [sig, from, to], data: encodeAbiParameters([{ type: 'uint256' }], [value]),
    blockNumber: '0x1b4', blockHash: hex(32), transactionHash: hex(32), logIndex: '0x2', removed: false, ...over,
  };
}

describe('decodeTransferLogs', () => {
  it('agrees with viem on 500 random transfers, mixed-case hex included', () => {
    const logs = Array.from({ length: 500 }, (_, i) => {
      const log = rawLog({ logIndex: `0x${i.toString(16)}` });
      return i % 2 ? { ...log, address: (log.address as string).toUpperCase().replace('0X', '0x'), topics: (log.topics as string[]).map((t) => t.toUpperCase().replace('0X', '0x')) } : log;
    });
    const ours = decodeTransferLogs(logs, token);
    expect(ours).toHaveLength(500);
    ours.forEach((d, i) => {
      const log = logs[i]!;
      const theirs = decodeEventLog({ abi: [transfer], topics: (log.topics as Hex[]).map((t) => t.toLowerCase() as Hex) as [Hex, ...Hex[]], data: log.data as Hex, strict: true });
      expect(d).toEqual({
        txHash: (log.transactionHash as string).toLowerCase(), logIndex: i, blockNumber: 436n, blockHash: (log.blockHash as string).toLowerCase(),
        from: theirs.args.from.toLowerCase(), to: theirs.args.to.toLowerCase(), value: theirs.args.value,
      });
    });
  });

  it.each<[string, Partial<RawLog>]>([
    ['removed', { removed: true }],
    ['another contract', { address: hex(20) }],
    ['another event', { topics: [hex(32), hex(32), hex(32)] }],
    ['an ERC-721 Transfer (tokenId indexed: four topics)', { topics: [transferTopic, `0x${'0'.repeat(24)}${'1'.repeat(40)}`, `0x${'0'.repeat(24)}${'2'.repeat(40)}`, hex(32)] }],
    ['dirty address padding', { topics: [transferTopic, `0x${'f'.repeat(24)}${'1'.repeat(40)}`, `0x${'0'.repeat(24)}${'2'.repeat(40)}`] }],
    ['two data words', { data: `0x${'0'.repeat(63)}1${'0'.repeat(64)}` }],
    ['no data', { data: '0x' }],
    ['a block number that is no quantity', { blockNumber: 'latest' }],
    ['a missing transaction hash', { transactionHash: undefined }],
    ['topics that are no list', { topics: 'x' }],
  ])('skips %s', (_name, over) => {
    expect(decodeTransferLogs([rawLog(over)], token)).toEqual([]);
  });

  it('skips zero-value transfers (address poisoning)', () => {
    expect(decodeTransferLogs([rawLog({}, 0n)], token)).toEqual([]);
  });
});

describe('the watch set\'s address book', () => {
  it('finds EVM addresses whatever their case, keeps owners apart and replaces in place', () => {
    const book = new AddressBook(evmKey);
    const a = `0x${'ab'.repeat(20)}`;
    book.set(a, { kind: 'payment_link', id: 'pl_1', storeId: 'cli_a' }, 1_000);
    book.set(`0x${'cd'.repeat(20)}`, { kind: 'derived', id: '', storeId: 'cli_b', derivedIndex: 2_147_483_647 }, Infinity);
    expect(book.get(a.toUpperCase().replace('0X', '0x'))).toEqual({ owner: { kind: 'payment_link', id: 'pl_1', storeId: 'cli_a' }, untilMs: 1_000 });
    expect(book.get(`0x${'CD'.repeat(20)}`)).toEqual({ owner: { kind: 'derived', id: 'cli_b:2147483647', storeId: 'cli_b', derivedIndex: 2_147_483_647 }, untilMs: Infinity });
    book.set(a, { kind: 'invoice', id: 'inv_1', storeId: 'cli_c' }, 5);
    expect(book.size).toBe(2);
    expect(book.get(a)).toEqual({ owner: { kind: 'invoice', id: 'inv_1', storeId: 'cli_c' }, untilMs: 5 });
    // A malformed string is never taken for the address its bytes would parse to.
    expect(book.get(`0x${'ab'.repeat(20)}zz`)).toBeUndefined();
    expect(book.get(`0x${'ab'.repeat(19)}`)).toBeUndefined();
    expect(book.get('')).toBeUndefined();
  });

  it('holds many addresses through growth, and a closed window matches nothing', () => {
    const set = new WatchSet('evm', 'test');
    const addresses = Array.from({ length: 5_000 }, () => hex(20));
    addresses.forEach((a, i) => set.addForTest(a, { kind: 'payment_link', id: `pl_${i}`, storeId: `cli_${i % 7}` }, i % 2 ? Infinity : 10));
    expect(set.size).toBe(5_000);
    addresses.forEach((a, i) => {
      expect(set.match(a, 100)).toEqual(i % 2 ? { kind: 'payment_link', id: `pl_${i}`, storeId: `cli_${i % 7}` } : undefined);
    });
    // TRON: the base58check form the rows hold and the hex form logs carry find the same owner.
    const tron = new WatchSet('tron', 'test');
    const bytes = randomBytes(20);
    const base58 = tronAddressFromBytes(bytes);
    tron.addForTest(base58, { kind: 'derived', id: '', storeId: 'cli_t', derivedIndex: 3 });
    const owner = { kind: 'derived', id: 'cli_t:3', storeId: 'cli_t', derivedIndex: 3 };
    expect(tron.match(base58, 0)).toEqual(owner);
    expect(tron.match(`0x${bytes.toString('hex')}`, 0)).toEqual(owner);
    expect(tron.match(base58.toLowerCase(), 0)).toBeUndefined();
    // A string that is not a valid TRON address (bad checksum) is no key of a real one.
    expect(tron.match(`${base58.slice(0, -1)}${base58.endsWith('1') ? '2' : '1'}`, 0)).toBeUndefined();
  });
});
