import { sql, type CommonQueryMethods } from 'slonik';
import { z } from 'zod';
import type { Environment } from '../domain/environment.js';

/**
 * The addresses Malipo handed out for one store and environment in one key family (docs/treasury.md):
 * link and invoice addresses (`link_addresses`, the link branch `/1/n`, joined to their link for
 * the store; links from before migration 0014 keep their index in `payment_links.address_index`)
 * and derived receive addresses that were handed out (`derived_addresses`, the receive branch
 * `/0/n`; gap rows nobody was given are not). Every key the store ever held counts: money stays on
 * an address after its key is replaced.
 */
export type TreasuryFamily = 'tron' | 'evm';

const handedRow = z.object({
  address: z.string(),
  source: z.enum(['payment_link', 'invoice', 'derived']),
  owner_id: z.string().nullable(),
  branch: z.number(),
  derivation_index: z.number().nullable(),
  created_at: z.string(),
});
export type HandedOutAddress = z.infer<typeof handedRow>;

export async function handedOutAddresses(db: CommonQueryMethods, storeId: string, environment: Environment, family: TreasuryFamily): Promise<readonly HandedOutAddress[]> {
  return db.any(sql.type(handedRow)`
    SELECT la.address, l.kind AS source, l.id AS owner_id, 1 AS branch,
      coalesce(la.derivation_index, l.address_index) AS derivation_index, la.created_at::text AS created_at
    FROM link_addresses la JOIN payment_links l ON l.id = la.owner_id
    WHERE la.family = ${family} AND l.store_id = ${storeId} AND l.environment = ${environment}
    UNION ALL
    SELECT d.address, 'derived' AS source, NULL AS owner_id, 0 AS branch, d.derived_index AS derivation_index, d.created_at::text AS created_at
    FROM derived_addresses d
    WHERE d.family = ${family} AND d.store_id = ${storeId} AND d.environment = ${environment} AND d.handed_out`);
}
