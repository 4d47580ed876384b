import fastifyStatic from '@fastify/static';
import type { FastifyInstance } from 'fastify';
import { createHash } from 'node:crypto';
import { readFileSync, readdirSync } from 'node:fs';
import { join, relative, sep } from 'node:path';
import { fileURLToPath } from 'node:url';

const staticDir = fileURLToPath(new URL('../../web/static/', import.meta.url));

/** Each file under web/static by its path there (`checkout/checkout.css`), with a hash of its bytes. */
function fingerprints(): Map<string, string> {
  const out = new Map<string, string>();
  for (const entry of readdirSync(staticDir, { recursive: true, withFileTypes: true })) {
    if (!entry.isFile()) continue;
    const full = join(entry.parentPath, entry.name);
    out.set(relative(staticDir, full).split(sep).join('/'), createHash('sha256').update(readFileSync(full)).digest('hex').slice(0, 12));
  }
  return out;
}

const hashes = fingerprints();

/**
 * The URL a page links an asset with: `/assets/<hash of its bytes>/<path>`. It changes whenever
 * the file does, so browsers may keep it for a year without asking again.
 */
export function assetUrl(path: string): string {
  const hash = hashes.get(path);
  if (!hash) throw new Error(`no asset web/static/${path}`);
  return `/assets/${hash}/${path}`;
}

/**
 * The files under web/static, served by @fastify/static (ETag, Last-Modified, conditional and
 * range requests): at `/static/<path>` (logos in rail records, older pages) for a day, and at
 * `assetUrl(path)` as immutable for a year. Only files present at boot have a route, so no request
 * can name a path outside the folder.
 */
export async function registerStatic(app: FastifyInstance): Promise<void> {
  await app.register(fastifyStatic, {
    root: staticDir,
    prefix: '/static/',
    wildcard: false,
    index: false,
    list: false,
    etag: true,
    lastModified: true,
    maxAge: '1d',
  });
  app.get('/assets/:hash/*', async (request, reply) => {
    const { hash, '*': path } = request.params as { hash: string; '*': string };
    const current = hashes.get(path);
    if (!current) return reply.callNotFound();
    // A page from a process that has other files (mid-deploy) still gets the file, but nobody keeps it.
    if (hash !== current) return reply.sendFile(path, { maxAge: 0, immutable: false });
    return reply.sendFile(path, { maxAge: '365d', immutable: true });
  });
}
