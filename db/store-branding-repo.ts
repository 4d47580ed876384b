import { sql, type CommonQueryMethods } from 'slonik';
import { z } from 'zod';
import type { Environment } from '../domain/environment.js';

/**
 * What the settings page adds to a store: its name (stores.name), the default redirect URL of an
 * environment (store_settings) and its checkout logo (store_logos, migration 0024).
 */
export interface LogoRef {
  sha256: string;
  contentType: 'image/png' | 'image/jpeg' | 'image/webp';
}

const logoRef = z.object({ sha256: z.string(), content_type: z.enum(['image/png', 'image/jpeg', 'image/webp']) });

export async function findStoreBranding(
  db: CommonQueryMethods,
  storeId: string,
  env: Environment,
): Promise<{ name: string; defaultRedirectUrl: string | null; logo: LogoRef | null }> {
  const row = await db.one(sql.type(z.object({ name: z.string(), default_redirect_url: z.string().nullable(), sha256: z.string().nullable(), content_type: z.string().nullable() }))`
    SELECT s.name, st.default_redirect_url, l.sha256, l.content_type
    FROM stores s
    LEFT JOIN store_settings st ON st.store_id = s.id AND st.environment = ${env}
    LEFT JOIN store_logos l ON l.store_id = s.id
    WHERE s.id = ${storeId}`);
  const logo = row.sha256 ? logoRef.parse({ sha256: row.sha256, content_type: row.content_type }) : null;
  return { name: row.name, defaultRedirectUrl: row.default_redirect_url, logo: logo && { sha256: logo.sha256, contentType: logo.content_type } };
}

/** `url` undefined leaves it as it is; null clears it. */
export async function setDefaultRedirectUrl(db: CommonQueryMethods, storeId: string, env: Environment, url: string | null): Promise<void> {
  await db.query(sql.unsafe`
    INSERT INTO store_settings (store_id, environment, default_redirect_url) VALUES (${storeId}, ${env}, ${url})
    ON CONFLICT (store_id, environment) DO UPDATE SET default_redirect_url = EXCLUDED.default_redirect_url, updated_at = now()`);
}

export async function renameStore(db: CommonQueryMethods, storeId: string, name: string): Promise<void> {
  await db.query(sql.unsafe`UPDATE stores SET name = ${name} WHERE id = ${storeId}`);
}

export async function putStoreLogo(db: CommonQueryMethods, storeId: string, logo: LogoRef & { bytes: Buffer }): Promise<void> {
  await db.query(sql.unsafe`
    INSERT INTO store_logos (store_id, sha256, content_type, bytes) VALUES (${storeId}, ${logo.sha256}, ${logo.contentType}, ${sql.binary(logo.bytes)})
    ON CONFLICT (store_id) DO UPDATE SET sha256 = EXCLUDED.sha256, content_type = EXCLUDED.content_type, bytes = EXCLUDED.bytes, updated_at = now()`);
}

export async function deleteStoreLogo(db: CommonQueryMethods, storeId: string): Promise<boolean> {
  const r = await db.query(sql.unsafe`DELETE FROM store_logos WHERE store_id = ${storeId}`);
  return r.rowCount > 0;
}

/** A logo by its hash (the public URL names nothing else); identical bytes are the same logo whoever uploaded them. */
export async function findLogoByHash(db: CommonQueryMethods, sha256: string): Promise<(LogoRef & { bytes: Buffer }) | null> {
  const row = await db.maybeOne(sql.type(z.object({ sha256: z.string(), content_type: z.enum(['image/png', 'image/jpeg', 'image/webp']), bytes: z.instanceof(Buffer) }))`
    SELECT sha256, content_type, bytes FROM store_logos WHERE sha256 = ${sha256} LIMIT 1`);
  return row ? { sha256: row.sha256, contentType: row.content_type, bytes: row.bytes } : null;
}
