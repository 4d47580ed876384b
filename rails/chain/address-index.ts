/**
 * 20-byte addresses (EVM, and TRON's bytes) → slot numbers, in an open-addressing hash table over
 * typed arrays: 20 bytes of key plus about 8 of table per address, and a lookup straight from the
 * 40 hex digits a log carries, in any case, without building a string, a buffer or a hash of a
 * string. The table is keyed on the address's own bytes (the tail of a Keccak hash, so already
 * uniform); the addresses it holds are the watcher's own, never a caller's choice, so no input can
 * lengthen a probe. Pure: no I/O.
 */
const hexValue = new Int8Array(128).fill(-1);
for (let i = 0; i < 10; i++) hexValue[48 + i] = i;
for (let i = 0; i < 6; i++) hexValue[65 + i] = hexValue[97 + i] = 10 + i;

/** `findHex` found a character that is not a hex digit: the string is no 20-byte address. */
export const notHex = -2;

const minTableSize = 1024;

export class AddressIndex {
  private keys = new Uint8Array(0);
  /** slot + 1 at each position; 0 is empty. Kept at most half full. */
  private table = new Int32Array(minTableSize);
  private mask = minTableSize - 1;
  private count = 0;

  /** The slot of 20 bytes, or -1. */
  find(bytes: Uint8Array): number {
    const { keys, table, mask } = this;
    for (let pos = hashOf(bytes[0]!, bytes[1]!, bytes[2]!, bytes[3]!) & mask; ; pos = (pos + 1) & mask) {
      const entry = table[pos]!;
      if (entry === 0) return -1;
      const base = (entry - 1) * 20;
      let i = 0;
      while (i < 20 && keys[base + i] === bytes[i]) i++;
      if (i === 20) return entry - 1;
    }
  }

  /** The slot of the 40 hex digits at `hex[offset…offset+40)`, or -1, or `notHex`. */
  findHex(hex: string, offset: number): number {
    const b0 = hexByte(hex, offset);
    const b1 = hexByte(hex, offset + 2);
    const b2 = hexByte(hex, offset + 4);
    const b3 = hexByte(hex, offset + 6);
    if ((b0 | b1 | b2 | b3) < 0) return notHex;
    const { keys, table, mask } = this;
    for (let pos = hashOf(b0, b1, b2, b3) & mask; ; pos = (pos + 1) & mask) {
      const entry = table[pos]!;
      if (entry === 0) return validHex(hex, offset) ? -1 : notHex;
      const base = (entry - 1) * 20;
      let i = 0;
      while (i < 20 && keys[base + i] === hexByte(hex, offset + 2 * i)) i++;
      if (i === 20) return entry - 1;
      if (hexByte(hex, offset + 2 * i) < 0) return notHex;
    }
  }

  /** Adds 20 bytes under `slot` (the caller's next slot number); the bytes must not be in the index. */
  insert(bytes: Uint8Array, slot: number): void {
    if ((this.count + 1) * 2 > this.table.length) this.rehash(this.table.length * 2);
    if ((slot + 1) * 20 > this.keys.length) {
      const grown = new Uint8Array(Math.max(minTableSize * 20, Math.ceil((slot + 1) * 1.5) * 20));
      grown.set(this.keys);
      this.keys = grown;
    }
    this.keys.set(bytes.subarray(0, 20), slot * 20);
    this.place(slot);
    this.count++;
  }

  private place(slot: number): void {
    const { keys, table, mask } = this;
    const base = slot * 20;
    let pos = hashOf(keys[base]!, keys[base + 1]!, keys[base + 2]!, keys[base + 3]!) & mask;
    while (table[pos] !== 0) pos = (pos + 1) & mask;
    table[pos] = slot + 1;
  }

  private rehash(size: number): void {
    const old = this.table;
    this.table = new Int32Array(size);
    this.mask = size - 1;
    for (const entry of old) if (entry !== 0) this.place(entry - 1);
  }
}

/** The first four bytes mixed (a multiply-shift), so that nearby values spread over the table. */
function hashOf(b0: number, b1: number, b2: number, b3: number): number {
  return Math.imul((b0 << 24) | (b1 << 16) | (b2 << 8) | b3, 0x9e3779b1) >>> 7;
}

/** The byte of the two hex digits at `i` (the caller checked the length), or -1 if either is not a hex digit. */
function hexByte(s: string, i: number): number {
  const hi = s.charCodeAt(i);
  const lo = s.charCodeAt(i + 1);
  if ((hi | lo) > 127) return -1;
  const h = hexValue[hi]!;
  const l = hexValue[lo]!;
  return (h | l) < 0 ? -1 : (h << 4) | l;
}

function validHex(s: string, offset: number): boolean {
  for (let i = offset; i < offset + 40; i++) {
    const c = s.charCodeAt(i);
    if (c > 127 || hexValue[c]! < 0) return false;
  }
  return true;
}
