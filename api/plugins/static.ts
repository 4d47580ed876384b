import { readFileSync, readdirSync } from 'node:fs';
import { dirname, extname, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import type { FastifyInstance } from 'fastify';

const staticDir = join(dirname(fileURLToPath(import.meta.url)), '..', '..', 'web', 'static');
const types: Record<string, string> = { '.svg': 'image/svg+xml', '.css': 'text/css', '.js': 'text/javascript', '.png': 'image/png' };

/**
 * Serves the files under `web/static` (logos, checkout assets) from memory: a fixed allow-list
 * read at boot, so no request can name a path outside it.
 */
export function registerStatic(app: FastifyInstance): void {
  const files = new Map<string, { body: Buffer; type: string }>();
  const walk = (dir: string, prefix: string) => {
    for (const entry of readdirSync(dir, { withFileTypes: true })) {
      if (entry.isDirectory()) walk(join(dir, entry.name), `${prefix}${entry.name}/`);
      else files.set(`${prefix}${entry.name}`, { body: readFileSync(join(dir, entry.name)), type: types[extname(entry.name)] ?? 'application/octet-stream' });
    }
  };
  walk(staticDir, '');
  app.get('/static/*', async (request, reply) => {
    const file = files.get((request.params as { '*': string })['*']);
    if (!file) return reply.callNotFound();
    return reply.header('content-type', file.type).header('cache-control', 'public, max-age=86400').send(file.body);
  });
}
