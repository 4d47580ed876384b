import { describe, expect, it } from '@jest/globals';
import { readFileSync } from 'node:fs';
import { buildOpenApi } from '../../api/openapi.js';

describe('docs/openapi.json', () => {
  it('matches the document generated from the route schemas (run `npm run openapi` after changing a route)', async () => {
    const committed = JSON.parse(readFileSync('docs/openapi.json', 'utf8'));
    expect(await buildOpenApi('http://localhost:3000')).toEqual(committed);
  });

  it('documents every operation with an id, a summary and an error response', async () => {
    const doc = (await buildOpenApi('http://localhost:3000')) as { paths: Record<string, Record<string, any>> };
    const ops = Object.values(doc.paths).flatMap((m) => Object.values(m));
    expect(ops.length).toBeGreaterThan(30);
    for (const op of ops) {
      expect(op.operationId).toBeTruthy();
      expect(op.summary).toBeTruthy();
      expect(op.responses.default).toBeDefined();
    }
  });
});
