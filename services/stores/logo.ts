import { createHash } from 'node:crypto';
import { deleteStoreLogo, findLogoByHash, putStoreLogo, type LogoRef } from '../../db/store-branding-repo.js';
import { AppError } from '../../domain/errors.js';
import type { ServiceDeps } from '../deps.js';
import type { StoreScope } from '../scope.js';

/**
 * The store's checkout logo. The checkout page may load images only from our own origin (its
 * Content-Security-Policy), so the logo is uploaded, kept in the database and served by us under
 * its SHA-256. Only raster formats, recognised by their first bytes whatever the file is called:
 * an SVG can carry script, so it is refused, as is anything else that is not PNG, JPEG or WebP.
 */
export const maxLogoBytes = 100 * 1024;

/** The format the bytes really are, or null. */
export function sniffLogo(bytes: Buffer): LogoRef['contentType'] | null {
  if (bytes.length >= 8 && bytes.subarray(0, 8).equals(Buffer.from([0x89, 0x50, 0x4e, 0x47, 0x0d, 0x0a, 0x1a, 0x0a]))) return 'image/png';
  if (bytes.length >= 3 && bytes[0] === 0xff && bytes[1] === 0xd8 && bytes[2] === 0xff) return 'image/jpeg';
  if (bytes.length >= 12 && bytes.toString('latin1', 0, 4) === 'RIFF' && bytes.toString('latin1', 8, 12) === 'WEBP') return 'image/webp';
  return null;
}

const looksLikeSvg = (bytes: Buffer): boolean => /<svg[\s>]/i.test(bytes.toString('utf8', 0, Math.min(bytes.length, 4096)));

/** Checks an upload; every refusal names the `logo` field and changes nothing. */
export function checkLogo(bytes: Buffer, truncated: boolean): LogoRef['contentType'] {
  if (truncated || bytes.length > maxLogoBytes) {
    throw new AppError('invalid_field', `Invalid 'logo': the file is over ${maxLogoBytes / 1024} KB; make it smaller (a logo of 400 × 400 pixels is plenty).`, 'logo');
  }
  if (bytes.length === 0) throw new AppError('missing_field', "Missing required field 'logo': choose a PNG, JPEG or WebP file.", 'logo');
  const type = sniffLogo(bytes);
  if (type) return type;
  if (looksLikeSvg(bytes)) throw new AppError('invalid_field', "Invalid 'logo': SVG is not accepted, because it can carry script. Upload a PNG, JPEG or WebP.", 'logo');
  throw new AppError('invalid_field', "Invalid 'logo': the file is not a PNG, JPEG or WebP image.", 'logo');
}

export async function setStoreLogo(deps: Pick<ServiceDeps, 'pool'>, scope: StoreScope, upload: { bytes: Buffer; truncated: boolean }): Promise<LogoRef> {
  const contentType = checkLogo(upload.bytes, upload.truncated);
  const logo = { sha256: createHash('sha256').update(upload.bytes).digest('hex'), contentType, bytes: upload.bytes };
  await putStoreLogo(deps.pool, scope.storeId, logo);
  return { sha256: logo.sha256, contentType };
}

export async function removeStoreLogo(deps: Pick<ServiceDeps, 'pool'>, scope: StoreScope): Promise<boolean> {
  return deleteStoreLogo(deps.pool, scope.storeId);
}

/** The logo a public URL names (`<sha256>.<ext>`), or null. */
export async function findPublicLogo(deps: Pick<ServiceDeps, 'pool'>, file: string): Promise<(LogoRef & { bytes: Buffer }) | null> {
  const m = /^([0-9a-f]{64})\.(png|jpg|webp)$/.exec(file);
  if (!m) return null;
  const logo = await findLogoByHash(deps.pool, m[1]!);
  const ext = { 'image/png': 'png', 'image/jpeg': 'jpg', 'image/webp': 'webp' } as const;
  return logo && ext[logo.contentType] === m[2] ? logo : null;
}
