import type { DepositOwner } from '../../db/chain-repo.js';
import { tronAddressToEvmHex } from '../tron/address.js';
import { AddressIndex, notHex } from './address-index.js';

/**
 * The watch set's storage: address → owner and watch window, for millions of addresses in about
 * a hundred bytes each. EVM and TRON addresses are kept as their 20 bytes in an `AddressIndex`
 * (a hash table over typed arrays) rather than as 42 hex or 34 base58 characters, so a watcher
 * matches a log's recipient straight from its hex without allocating, and checksums (EIP-55,
 * base58check) only the few that match; anything else (Solana references) in a Map. Each address
 * has a slot number, and the slot's facts live in typed arrays: the kind, the window's end, the
 * store (interned), the derived index. Only a link's or an invoice's own id is kept as a string; a
 * derived address's id (`store:index`) is made when it matches. Pure: no I/O.
 */
const kinds = ['payment_link', 'invoice', 'derived'] as const;
const kindCode = { payment_link: 0, invoice: 1, derived: 2 } as const;

/**
 * The key of an EVM address: its 20 bytes (from `0x…` or the bare 40 hex digits, any case);
 * anything else (a malformed string) as written, marked apart so that it never equals a real
 * address's key.
 */
export function evmKey(address: string): Uint8Array | string {
  const offset = hexOffset(address);
  if (offset >= 0) {
    const bytes = Buffer.from(address.slice(offset), 'hex');
    if (bytes.length === 20) return bytes;
  }
  return `\u0100${address.toLowerCase()}`;
}

/** Where the 40 hex digits of an EVM-form address start (`0x` + 40, or the 40 alone), or -1. No regular expression: this runs for every log. */
function hexOffset(address: string): number {
  if (address.length === 42 && address.charCodeAt(0) === 48 && (address.charCodeAt(1) | 32) === 120) return 2;
  return address.length === 40 ? 0 : -1;
}

export class AddressBook {
  private readonly index = new AddressIndex();
  private readonly others = new Map<string, number>();
  private count = 0;
  private kind = new Uint8Array(0);
  private until = new Float64Array(0);
  private store = new Uint32Array(0);
  private derivedIndex = new Uint32Array(0);
  private readonly ownerIds: string[] = [];
  private readonly storeIds: string[] = [];
  private readonly storeNumbers = new Map<string, number>();

  /**
   * `keyOf` gives an address's 20 bytes, or a string for any other kind of address. `hexForms`:
   * the EVM hex form (`0x` + 40 or the 40 alone) is one of the book's forms (EVM and TRON), so it
   * is looked up from its digits directly.
   */
  constructor(
    private readonly keyOf: (address: string) => Uint8Array | string,
    private readonly hexForms = true,
  ) {}

  get size(): number {
    return this.count;
  }

  /** Adds or replaces the owner of an address. */
  set(address: string, owner: DepositOwner, untilMs: number): void {
    const key = this.keyOf(address);
    let slot = typeof key === 'string' ? (this.others.get(key) ?? -1) : this.index.find(key);
    if (slot < 0) {
      slot = this.count++;
      if (slot >= this.kind.length) this.grow(Math.max(1024, Math.ceil(this.kind.length * 1.5)));
      if (typeof key === 'string') this.others.set(key, slot);
      else this.index.insert(key, slot);
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
    const slot = this.slotOf(address);
    if (slot < 0) return undefined;
    const kind = kinds[this.kind[slot]!]!;
    const storeId = this.storeIds[this.store[slot]!]!;
    if (kind === 'derived') {
      const derivedIndex = this.derivedIndex[slot]!;
      return { owner: { kind, id: `${storeId}:${derivedIndex}`, storeId, derivedIndex }, untilMs: this.until[slot]! };
    }
    return { owner: { kind, id: this.ownerIds[slot]!, storeId }, untilMs: this.until[slot]! };
  }

  private slotOf(address: string): number {
    if (this.hexForms) {
      const offset = hexOffset(address);
      if (offset >= 0) {
        const slot = this.index.findHex(address, offset);
        if (slot !== notHex) return slot;
      }
    }
    const key = this.keyOf(address);
    return typeof key === 'string' ? (this.others.get(key) ?? -1) : this.index.find(key);
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
export function tronKey(address: string): Uint8Array | string {
  if (address.length === 34 && address.charCodeAt(0) === 84 /* T */) {
    try {
      return evmKey(tronAddressToEvmHex(address));
    } catch {
      return `\u0100${address}`;
    }
  }
  return evmKey(address);
}
