import type { DepositOwner } from '../../db/chain-repo.js';
import { tronAddressToEvmHex } from '../../domain/hd/address.js';

/**
 * The watch set's storage: address → owner and watch window, for millions of addresses in about
 * a hundred bytes each. One Map from a compact key to a slot number, and the slot's facts in typed
 * arrays: the kind, the window's end, the store (interned), the derived index. Only a link's or an
 * invoice's own id is kept as a string; a derived address's id (`store:index`) is made when it
 * matches. EVM and TRON addresses are keyed by their 20 bytes (a 20-character latin1 string)
 * rather than 42 hex or 34 base58 characters, so a watcher matches a log's recipient straight from
 * its hex, and checksums (EIP-55, base58check) only the few that match. Pure: no I/O.
 */
const kinds = ['payment_link', 'invoice', 'derived'] as const;
const kindCode = { payment_link: 0, invoice: 1, derived: 2 } as const;

/**
 * The Map key of an address: EVM by its 20 bytes (from `0x…` or the bare 40 hex digits, any case); anything else (a malformed EVM string) as
 * written, marked apart. Node's hex decoder stops at the first character that is not hex, so a
 * malformed string decodes short and falls to the second form; its non-latin1 first character
 * keeps it from ever equalling a 20-byte key. On the hot path of every log a watcher reads: no
 * regular expression.
 */
export function evmKey(address: string): string {
  // `0x` + 40 hex, or the 40 hex alone (a log topic's tail, matched without building a new string).
  const body = address.length === 42 && address.charCodeAt(0) === 48 && (address.charCodeAt(1) | 32) === 120 ? address.slice(2) : address.length === 40 ? address : null;
  if (body !== null) {
    const bytes = Buffer.from(body, 'hex');
    if (bytes.length === 20) return bytes.toString('latin1');
  }
  return `\u0100${address.toLowerCase()}`;
}

export class AddressBook {
  private readonly slots = new Map<string, number>();
  private kind = new Uint8Array(0);
  private until = new Float64Array(0);
  private store = new Uint32Array(0);
  private derivedIndex = new Uint32Array(0);
  private readonly ownerIds: string[] = [];
  private readonly storeIds: string[] = [];
  private readonly storeNumbers = new Map<string, number>();

  constructor(private readonly keyOf: (address: string) => string) {}

  get size(): number {
    return this.slots.size;
  }

  /** Adds or replaces the owner of an address. */
  set(address: string, owner: DepositOwner, untilMs: number): void {
    const key = this.keyOf(address);
    let slot = this.slots.get(key);
    if (slot === undefined) {
      slot = this.slots.size;
      if (slot >= this.kind.length) this.grow(Math.max(1024, Math.ceil(this.kind.length * 1.5)));
      this.slots.set(key, slot);
    }
    this.kind[slot] = kindCode[owner.kind];
    this.until[slot] = untilMs;
    this.store[slot] = this.storeNumber(owner.storeId);
    const derived = owner.kind === 'derived';
    this.derivedIndex[slot] = derived ? (owner.derivedIndex ?? 0) : 0;
    this.ownerIds[slot] = derived ? '' : owner.id;
  }

  /** The owner of an address and the end of its watch window, if the book holds it. */
  get(address: string): { owner: DepositOwner; untilMs: number } | undefined {
    const slot = this.slots.get(this.keyOf(address));
    if (slot === undefined) return undefined;
    const kind = kinds[this.kind[slot]!]!;
    const storeId = this.storeIds[this.store[slot]!]!;
    if (kind === 'derived') {
      const derivedIndex = this.derivedIndex[slot]!;
      return { owner: { kind, id: `${storeId}:${derivedIndex}`, storeId, derivedIndex }, untilMs: this.until[slot]! };
    }
    return { owner: { kind, id: this.ownerIds[slot]!, storeId }, untilMs: this.until[slot]! };
  }

  private storeNumber(storeId: string): number {
    let n = this.storeNumbers.get(storeId);
    if (n === undefined) {
      n = this.storeIds.length;
      this.storeIds.push(storeId);
      this.storeNumbers.set(storeId, n);
    }
    return n;
  }

  private grow(capacity: number): void {
    const grown = <T extends Uint8Array | Float64Array | Uint32Array>(old: T, make: (n: number) => T): T => {
      const next = make(capacity);
      next.set(old as never);
      return next;
    };
    this.kind = grown(this.kind, (n) => new Uint8Array(n));
    this.until = grown(this.until, (n) => new Float64Array(n));
    this.store = grown(this.store, (n) => new Uint32Array(n));
    this.derivedIndex = grown(this.derivedIndex, (n) => new Uint32Array(n));
  }
}

/** A TRON address's key: its 20 bytes, from base58check (`T…`) or the hex form logs carry; the same key space as `evmKey`. */
export function tronKey(address: string): string {
  if (address.length === 34 && address.charCodeAt(0) === 84 /* T */) {
    try {
      return evmKey(tronAddressToEvmHex(address));
    } catch {
      return `\u0100${address}`;
    }
  }
  return evmKey(address);
}
