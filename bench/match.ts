// The chain watchers' CPU and memory, pure (no database, no chain), side by side with the
// previous design in the same run (`npm run bench match`):
// - memory: bytes per watched address in the watch set, 1M link addresses and 1M derived ones,
//   against the previous Map of address strings to owner objects;
// - ingest: an eth_getLogs answer of Transfer logs, from the JSON text to matched owners
//   (JSON.parse, decode, match against 1M watched addresses), against the previous decoding by
//   viem's ABI decoder, with JSON.parse alone as the floor;
// - receive-branch derivation speed: the service's `deriveAddress` against the libraries it uses
//   (bip32 + tiny-secp256k1, viem's keccak and EIP-55) called directly with the branch node held,
//   the same caching, alternating rounds in one run.
import { BIP32Factory } from 'bip32';
import { randomBytes } from 'node:crypto';
import * as ecc from 'tiny-secp256k1';
import { setFlagsFromString } from 'node:v8';
import { runInNewContext } from 'node:vm';
import { decodeEventLog, encodeAbiParameters, encodeEventTopics, getAddress, keccak256, parseAbiItem, toHex, type Hex } from 'viem';
import type { DepositOwner } from '../db/chain-repo.js';
import { decodeTransferLogs } from '../rails/evm/decode-transfers.js';
import { WatchSet } from '../rails/chain/watch-set.js';
import { deriveAddress } from '../rails/chain/derive-address.js';

setFlagsFromString('--expose-gc');
const gc = runInNewContext('gc') as () => void;

const hex = (bytes: number) => `0x${randomBytes(bytes).toString('hex')}`;
const linkId = () => `pl_${randomBytes(12).toString('hex').slice(0, 24)}`;
const storeIds = Array.from({ length: 1_000 }, () => `cli_${randomBytes(12).toString('hex').slice(0, 24)}`);

/** Heap plus typed-array memory, after a full collection. */
function memoryNow(): number {
  gc();
  gc();
  const m = process.memoryUsage();
  return m.heapUsed + m.arrayBuffers;
}

interface PreviousEntry extends DepositOwner {
  watchUntilMs: number;
}

/** Bytes per address of one watch set holding `n` addresses, built as a full reload builds it. */
function bytesPerAddress(n: number, kind: 'payment_link' | 'derived', design: 'now' | 'previous'): number {
  // What the set keeps once the rows it was loaded from are gone, as after a reload.
  const before = memoryNow();
  const rows = Array.from({ length: n }, (_, i) => ({
    address: hex(20), storeId: storeIds[i % storeIds.length]!.slice(0), id: kind === 'derived' ? '' : linkId(), index: i,
  }));
  let held: unknown;
  if (design === 'now') {
    const set = new WatchSet('evm', 'live');
    for (const r of rows) set.addForTest(r.address, { kind, id: r.id, storeId: r.storeId, derivedIndex: kind === 'derived' ? r.index : undefined }, kind === 'derived' ? Infinity : Date.now() + 3_600_000);
    held = set;
  } else {
    const map = new Map<string, PreviousEntry>();
    for (const r of rows) {
      map.set(r.address.toLowerCase(), kind === 'derived'
        ? { kind, id: `${r.storeId}:${r.index}`, storeId: r.storeId, derivedIndex: r.index, watchUntilMs: Infinity }
        : { kind, id: r.id, storeId: r.storeId, derivedIndex: undefined, watchUntilMs: Date.now() + 3_600_000 });
    }
    held = map;
  }
  rows.length = 0;
  const after = memoryNow();
  if (!held) throw new Error('unreachable');
  return Math.round((after - before) / n);
}

const transfer = parseAbiItem('event Transfer(address indexed from, address indexed to, uint256 value)');

/** An eth_getLogs answer as the node sends it: `logs` Transfer logs, `hitRate` of them to watched addresses. */
function getLogsAnswer(token: string, watched: string[], logs: number, hitRate: number): string {
  const result = [];
  for (let i = 0; i < logs; i++) {
    const to = Math.random() < hitRate ? watched[(Math.random() * watched.length) | 0]! : hex(20);
    const topics = encodeEventTopics({ abi: [transfer], eventName: 'Transfer', args: { from: hex(20) as Hex, to: to as Hex } });
    result.push({
      address: token, topics, data: encodeAbiParameters([{ type: 'uint256' }], [BigInt(hex(8)) + 1n]),
      blockNumber: `0x${(30_000_000 + (i >> 8)).toString(16)}`, blockHash: hex(32), transactionHash: hex(32),
      transactionIndex: '0x1', logIndex: `0x${(i & 255).toString(16)}`, removed: false,
    });
  }
  return JSON.stringify({ jsonrpc: '2.0', id: 1, result });
}

function perSecond(n: number, run: () => number): { perSecond: number; hits: number } {
  const t0 = process.hrtime.bigint();
  const hits = run();
  return { perSecond: Math.round(n / (Number(process.hrtime.bigint() - t0) / 1e9)), hits };
}

export function benchMatch(watched = 1_000_000, logs = 200_000, hitRate = 0.01) {
  const memory = {
    linkBytesPerAddress: bytesPerAddress(watched, 'payment_link', 'now'),
    derivedBytesPerAddress: bytesPerAddress(watched, 'derived', 'now'),
    previousLinkBytesPerAddress: bytesPerAddress(watched, 'payment_link', 'previous'),
    previousDerivedBytesPerAddress: bytesPerAddress(watched, 'derived', 'previous'),
  };

  const token = hex(20);
  const set = new WatchSet('evm', 'live');
  const addresses: string[] = [];
  for (let i = 0; i < watched; i++) {
    const a = hex(20);
    addresses.push(a);
    set.addForTest(a, { kind: 'payment_link', id: `pl_${i}`, storeId: storeIds[i % storeIds.length]! });
  }
  const answer = getLogsAnswer(token, addresses, logs, hitRate);
  const now = Date.now();
  const rounds = 3;
  const best = (run: () => { perSecond: number; hits: number }) => {
    const results = Array.from({ length: rounds }, run);
    return results.reduce((a, b) => (b.perSecond > a.perSecond ? b : a));
  };
  const floor = best(() => perSecond(logs, () => (JSON.parse(answer) as { result: unknown[] }).result.length));
  const ingest = best(() => perSecond(logs, () => {
    let hits = 0;
    const wanted = (to: string) => set.match(to, now) !== undefined;
    for (const t of decodeTransferLogs((JSON.parse(answer) as { result: [] }).result, token, wanted)) if (set.match(t.to, now)) hits++;
    return hits;
  }));
  const previous = best(() => perSecond(logs, () => {
    let hits = 0;
    for (const log of (JSON.parse(answer) as { result: { topics: [Hex, ...Hex[]]; data: Hex }[] }).result) {
      const { args } = decodeEventLog({ abi: [transfer], topics: log.topics, data: log.data, strict: true });
      if (args.value !== 0n && set.match(args.to.toLowerCase(), now)) hits++;
    }
    return hits;
  }));
  return {
    watched,
    logs,
    hits: ingest.hits,
    ...memory,
    ingestPerSecond: ingest.perSecond,
    previousIngestPerSecond: previous.perSecond,
    jsonParseOnlyPerSecond: floor.perSecond,
    answerMiB: Math.round(answer.length / 2 ** 20),
  };
}

export function benchDerive(count = 2_000, rounds = 9) {
  const xpub = 'xpub6Ce9NcJvTk36xtLSrJLZqE7wtgA5deCeYs7rSQtreh4cj6ByPtrg9sD7V2FNFLPnf8heNP3FGkeV9qwfzvZNSd54JoNXVsXFYSYwHsnJxqP';
  const branch = BIP32Factory(ecc).fromBase58(xpub).derive(0);
  const library = (i: number) => getAddress(toHex(keccak256(ecc.pointCompress(branch.derive(i).publicKey, false).subarray(1), 'bytes').subarray(12)));
  const service = (i: number) => deriveAddress(xpub, 'evm', 0, i);
  if (library(7) !== service(7)) throw new Error('derive: the library baseline and the service disagree');
  const timed = (derive: (i: number) => string, from: number) => {
    const t0 = process.hrtime.bigint();
    for (let i = from; i < from + count; i++) derive(i);
    return Number(process.hrtime.bigint() - t0) / 1e9;
  };
  const app: number[] = [];
  const bare: number[] = [];
  for (let r = 0; r < rounds; r++) {
    app.push(timed(service, 1 + r * count));
    bare.push(timed(library, 1 + r * count));
  }
  const seconds = Math.min(...app);
  const libSeconds = Math.min(...bare);
  return {
    count,
    addressesPerSecond: Math.round(count / seconds),
    microsPerAddress: Math.round((seconds / count) * 1e6),
    libraryAddressesPerSecond: Math.round(count / libSeconds),
    ratio: Math.round((libSeconds / seconds) * 100) / 100,
  };
}
