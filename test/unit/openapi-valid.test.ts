import { afterAll, beforeAll, describe, expect, it } from '@jest/globals';
import { Validator } from '@seriousme/openapi-schema-validator';
import type { FastifyInstance } from 'fastify';
import openapiTS, { astToString } from 'openapi-typescript';
import ts from 'typescript';
import { buildOpenApi } from '../../api/openapi.js';
import { memoryRateLimitStore } from '../../api/plugins/rate-limit.js';
import { loadConfig } from '../../config/config.js';
import { RateService } from '../../services/rates/rate-service.js';
import { buildApp } from '../../runtime/http-app.js';

/**
 * The document the app serves must be usable by the tools merchants point at it: a well-kept
 * OpenAPI 3.1 validator accepts it with every reference resolved, named schemas are shared
 * components (never copies carrying a stray `id`), and a client generator turns it into types
 * that compile and name our shapes.
 */
let app: FastifyInstance;
let doc: Record<string, any>;

beforeAll(async () => {
  const config = loadConfig({ PORT: '0', LOG_LEVEL: 'silent', PUBLIC_BASE_URL: 'http://localhost:3000' });
  // GET /v1/openapi.json touches neither PostgreSQL nor Temporal.
  app = await buildApp({
    config, pool: undefined as never, temporal: undefined as never,
    rateLimitStore: memoryRateLimitStore(), rates: new RateService({ testKesPerUsdt: '130', sources: [] }),
  } as never);
  const res = await app.inject({ method: 'GET', url: '/v1/openapi.json' });
  expect(res.statusCode).toBe(200);
  doc = res.json();
});
afterAll(async () => {
  await app?.close();
});

function refsIn(node: unknown, out: string[] = []): string[] {
  if (Array.isArray(node)) node.forEach((n) => refsIn(n, out));
  else if (node && typeof node === 'object') {
    for (const [k, v] of Object.entries(node)) {
      if (k === '$ref' && typeof v === 'string') out.push(v);
      else refsIn(v, out);
    }
  }
  return out;
}

/** Schema objects that carry zod's `id` as a keyword: a named schema copied in place. */
function inlinedIds(node: unknown, out: string[] = []): string[] {
  if (Array.isArray(node)) node.forEach((n) => inlinedIds(n, out));
  else if (node && typeof node === 'object') {
    const o = node as Record<string, unknown>;
    if (typeof o.id === 'string' && ('type' in o || 'properties' in o || 'anyOf' in o)) out.push(o.id);
    Object.values(o).forEach((v) => inlinedIds(v, out));
  }
  return out;
}

describe('the served OpenAPI document', () => {
  it('is valid OpenAPI 3.1 with every reference resolvable', async () => {
    const validator = new Validator();
    const result = await validator.validate(structuredClone(doc));
    expect(result.errors).toBeUndefined();
    expect(result.valid).toBe(true);
    expect(validator.version).toBe('3.1');
    expect(() => validator.resolveRefs()).not.toThrow();
    const refs = refsIn(doc);
    expect(refs.length).toBeGreaterThan(30);
    for (const ref of refs) {
      expect(ref).toMatch(/^#\/components\/schemas\//);
      expect(doc.components.schemas).toHaveProperty(ref.slice('#/components/schemas/'.length));
    }
  });

  it('refers to each named schema as a component instead of copying it', () => {
    expect(inlinedIds(doc.paths)).toEqual([]);
    for (const name of ['PaymentLink', 'PaymentLinkDetail', 'CreatePaymentLinkInput', 'Invoice', 'Rail', 'Error']) {
      expect(doc.components.schemas).toHaveProperty(name);
    }
    const created = doc.paths['/v1/payment-links'].post;
    expect(created.responses['201'].content['application/json'].schema).toEqual({ $ref: '#/components/schemas/PaymentLink' });
    expect(created.requestBody.content['application/json'].schema).toEqual({ $ref: '#/components/schemas/CreatePaymentLinkInput' });
  });

  it('is the document `npm run openapi` writes to docs/openapi.json', async () => {
    expect(doc).toEqual(await buildOpenApi('http://localhost:3000'));
  });

  it('generates a typed client (openapi-typescript) that compiles and names the payment link', async () => {
    const source = astToString(await openapiTS(structuredClone(doc) as never));
    const usage = `
      type Link = components['schemas']['PaymentLink'];
      const status: Link['status'] = 'PENDING';
      type Create = paths['/v1/payment-links']['post'];
      type Created = Create['responses'][201]['content']['application/json'];
      const id: Created['id'] = 'pl_x';
      type Body = NonNullable<Create['requestBody']>['content']['application/json'];
      const rails: Body['enabledRails'] = ['USDT_BSC'];
      export { status, id, rails };
    `;
    const files = new Map([['client.ts', `${source}\n${usage}`]]);
    const host = ts.createCompilerHost({ strict: true, noEmit: true, target: ts.ScriptTarget.ES2022 });
    const original = host.getSourceFile.bind(host);
    host.getSourceFile = (name, lang) => (files.has(name) ? ts.createSourceFile(name, files.get(name)!, lang) : original(name, lang));
    const program = ts.createProgram(['client.ts'], { strict: true, noEmit: true, target: ts.ScriptTarget.ES2022, types: [] }, host);
    const problems = ts.getPreEmitDiagnostics(program).map((d) => ts.flattenDiagnosticMessageText(d.messageText, '\n'));
    expect(problems).toEqual([]);
  });
});
