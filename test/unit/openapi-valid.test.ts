import { describe, expect, it } from '@jest/globals';
import { Validator } from '@seriousme/openapi-schema-validator';
import openapiTS, { astToString } from 'openapi-typescript';
import ts from 'typescript';
import { buildOpenApi } from '../../api/openapi.js';

/**
 * The document must be usable by the tools merchants point at it: a well-kept OpenAPI 3.1
 * validator accepts it with every reference resolved, and a client generator turns it into types
 * that compile and name our shapes.
 */
const doc = buildOpenApi('http://localhost:3000') as Record<string, any>;

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

describe('the OpenAPI document', () => {
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

  it('generates a typed client (openapi-typescript) that compiles and names the payment link', async () => {
    const source = astToString(await openapiTS(structuredClone(doc) as never));
    const usage = `
      type Link = components['schemas']['PaymentLink'];
      const status: Link['status'] = 'PENDING';
      type Create = paths['/v1/payment-links']['post'];
      type Created = Create['responses'][201]['content']['application/json'];
      const id: Created['id'] = 'pl_x';
      export { status, id };
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
