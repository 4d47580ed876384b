import { sql, type CommonQueryMethods, type DatabasePool } from 'slonik';
import { z } from 'zod';
import { maxIndex } from '../domain/hd/derive.js';

/**
 * Link-branch addresses (`<xpub>/1/<n>`) for payment links and invoices: each one handed out once,
 * ever (migration 0014). The index sequence belongs to the key, shared by every store and
 * environment that holds it, and every address handed out is recorded in `link_addresses`, which
 * nothing deletes. An address found there is stepped over, so a key that was shared before the
 * one-store rule, or whose sequence started after addresses were already taken, never hands the
 * same address to two links — and creating a link never fails on a collision.
 */
export type LinkAddressFamily = 'tron' | 'evm';

export interface LinkAddress {
  index: number;
  /** As derived (EVM checksummed), for the link. */
  address: string;
}

interface Candidate extends LinkAddress {
  ledger: string;
}

/** One family's address a link needs: the key it comes from and how an index becomes its address. */
export interface LinkAddressRequest {
  family: LinkAddressFamily;
  publicKey: string;
  derive: (index: number) => string;
  /** The form an address is recorded and watched in: the payment method's `ledgerKey` (EVM lowercased, TRON as derived). */
  ledgerKey: (address: string) => string;
}

const firstRow = z.object({ first: z.number() });
const addressRow = z.object({ address: z.string() });
const familyFirstRow = z.object({ family: z.enum(['tron', 'evm']), first: z.number() });
const familyRow = z.object({ family: z.enum(['tron', 'evm']) });

/** How many indexes each look-ahead reserves after a taken address: grows so a long run costs few round trips. */
const lookAhead = [16, 128, 1024] as const;

/**
 * Takes the link's next free address of each family (its EVM and its TRON address) for
 * `ownerId`, with no lock held across round trips: every statement commits on its own (the pool,
 * never a transaction). The first try of every family takes two statements: one atomic
 * UPDATE-or-INSERT reserves the next index of each key, so concurrent creations with one key get
 * different indexes without waiting on each other; the addresses are derived after it, with
 * nothing locked; one INSERT records every address in the ledger, refusing one handed out before.
 * A family whose address was refused steps over it alone (`stepOver`). Counters and ledger rows
 * are taken in one order (by family), so two creations never wait on each other in a cycle.
 *
 * The branch stays without gaps: indexes reserved past the one taken (after stepping over a run of
 * taken addresses) are given back when no creation reserved after them meanwhile. What can leave a
 * gap is a creation that dies between reserving and writing its link (its address is recorded,
 * never reused), or that give-back losing a race: single unused addresses, far below a wallet's
 * gap limit of 20 unless creations fail in a row.
 */
export async function allocateLinkAddresses(db: DatabasePool, ownerId: string, requests: readonly LinkAddressRequest[]): Promise<LinkAddress[]> {
  if (requests.length === 0) return [];
  if (new Set(requests.map((r) => r.family)).size !== requests.length) throw new Error('one link address per family');
  const ordered = [...requests].sort((a, b) => a.family.localeCompare(b.family));
  const reserved = await db.any(sql.type(familyFirstRow)`
    INSERT INTO link_address_counters (family, public_key, next_index)
    VALUES ${sql.join(ordered.map((r) => sql.fragment`(${r.family}, ${r.publicKey}, 1)`), sql.fragment`, `)}
    ON CONFLICT (family, public_key) DO UPDATE SET next_index = link_address_counters.next_index + 1
    RETURNING family, next_index - 1 AS first`);
  const firstOf = new Map(reserved.map((r) => [r.family, r.first]));
  // Both statements take the families in one order (by family): the ledger INSERT waits on a row
  // another creation inserted and has not committed yet (two keys written differently can derive
  // the same addresses), so taking them in the links' own rail order could wait in a cycle.
  const candidates = ordered.map((r) => {
    const index = firstOf.get(r.family);
    if (index === undefined) throw new Error(`no index reserved for the ${r.family} key`);
    if (index > maxIndex) throw new Error(`the link branch of this ${r.family} key is used up (index ${index})`);
    const address = r.derive(index);
    return { index, address, ledger: r.ledgerKey(address) };
  });
  const recorded = new Set(await db.anyFirst(sql.type(familyRow)`
    INSERT INTO link_addresses (family, address, public_key, derivation_index, owner_id)
    SELECT f, a, k, i, ${ownerId} FROM unnest(
      ${sql.array(ordered.map((r) => r.family), 'text')}::text[], ${sql.array(candidates.map((c) => c.ledger), 'text')}::text[],
      ${sql.array(ordered.map((r) => r.publicKey), 'text')}::text[], ${sql.array(candidates.map((c) => c.index), 'int4')}::int4[]) AS t(f, a, k, i)
    ON CONFLICT (family, address) DO NOTHING
    RETURNING family`));
  return Promise.all(requests.map((r) => {
    const c = candidates[ordered.indexOf(r)]!;
    return recorded.has(r.family) ? { index: c.index, address: c.address } : stepOver(db, { ...r, ownerId });
  }));
}

/**
 * After a family's first try found its address handed out before: reserves a growing run of
 * indexes, reads which of their addresses the ledger has, records the first free one, and gives
 * back the rest of the run when nobody reserved after it.
 */
async function stepOver(db: DatabasePool, q: LinkAddressRequest & { ownerId: string }): Promise<LinkAddress> {
  for (let round = 0; ; round++) {
    const count = lookAhead[Math.min(round, lookAhead.length - 1)]!;
    const first = await reserveIndexes(db, q.family, q.publicKey, count);
    const candidates: Candidate[] = indexesFrom(first, count).map((index) => {
      const address = q.derive(index);
      return { index, address, ledger: q.ledgerKey(address) };
    });
    const taken = await takenAmong(db, q.family, candidates.map((c) => c.ledger));
    for (const candidate of candidates) {
      if (taken.has(candidate.ledger) || !(await record(db, q, candidate))) continue;
      if (candidate.index < first + count - 1) await giveBack(db, q.family, q.publicKey, first + count, candidate.index + 1);
      return { index: candidate.index, address: candidate.address };
    }
  }
}

/** Reserves `count` indexes of the key's sequence and returns the first; refuses to pass 2^31 − 1. */
async function reserveIndexes(tx: CommonQueryMethods, family: LinkAddressFamily, publicKey: string, count: number): Promise<number> {
  const first = await tx.oneFirst(sql.type(firstRow)`
    INSERT INTO link_address_counters (family, public_key, next_index) VALUES (${family}, ${publicKey}, ${count})
    ON CONFLICT (family, public_key) DO UPDATE SET next_index = link_address_counters.next_index + ${count}
    RETURNING next_index - ${count} AS first`);
  if (first > maxIndex) throw new Error(`the link branch of this ${family} key is used up (index ${first})`);
  return first;
}

function indexesFrom(first: number, count: number): number[] {
  return Array.from({ length: Math.min(count, maxIndex - first + 1) }, (_, i) => first + i);
}

async function takenAmong(tx: CommonQueryMethods, family: LinkAddressFamily, addresses: string[]): Promise<Set<string>> {
  const rows = await tx.anyFirst(sql.type(addressRow)`
    SELECT address FROM link_addresses WHERE family = ${family} AND address = ANY(${sql.array(addresses, 'text')})`);
  return new Set(rows);
}

/** Records the address as handed out; false when it already was. */
async function record(
  tx: CommonQueryMethods,
  q: { family: LinkAddressFamily; publicKey: string; ownerId: string },
  c: Candidate,
): Promise<boolean> {
  const inserted = await tx.maybeOneFirst(sql.type(addressRow)`
    INSERT INTO link_addresses (family, address, public_key, derivation_index, owner_id)
    VALUES (${q.family}, ${c.ledger}, ${q.publicKey}, ${c.index}, ${q.ownerId})
    ON CONFLICT (family, address) DO NOTHING
    RETURNING address`);
  return inserted !== null;
}

/** Moves the counter back from `reservedTo` to `nextIndex`, only if it still stands where this reservation left it. */
async function giveBack(db: CommonQueryMethods, family: LinkAddressFamily, publicKey: string, reservedTo: number, nextIndex: number): Promise<void> {
  await db.query(sql.unsafe`UPDATE link_address_counters SET next_index = ${nextIndex}
    WHERE family = ${family} AND public_key = ${publicKey} AND next_index = ${reservedTo}`);
}
