import { sql, type CommonQueryMethods } from 'slonik';
import { z } from 'zod';

/** A link's cached Dynamic QR image for one amount (migration 0035), or null. */
export async function findDynamicQr(db: CommonQueryMethods, linkId: string, amount: number): Promise<Buffer | null> {
  const row = await db.maybeOne(sql.type(z.object({ png: z.instanceof(Buffer) }))`
    SELECT png FROM mpesa_dynamic_qr WHERE link_id = ${linkId} AND amount = ${amount}`);
  return row?.png ?? null;
}

/** Keeps the image; a concurrent first view that stored one already wins (both came from Daraja for the same request). */
export async function saveDynamicQr(db: CommonQueryMethods, linkId: string, amount: number, png: Buffer): Promise<void> {
  await db.query(sql.unsafe`
    INSERT INTO mpesa_dynamic_qr (link_id, amount, png) VALUES (${linkId}, ${amount}, ${sql.binary(png)})
    ON CONFLICT (link_id, amount) DO NOTHING`);
}
