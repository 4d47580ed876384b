import { z } from 'zod/v4';
import type { RouteDef } from './route.js';
import { allRoutes } from './routes/index.js';

const errorSchema = {
  type: 'object',
  required: ['error'],
  properties: {
    error: {
      type: 'object',
      required: ['type', 'code', 'message', 'requestId'],
      properties: {
        type: { type: 'string', enum: ['invalid_request_error', 'authentication_error', 'permission_error', 'not_found_error', 'conflict_error', 'rate_limit_error', 'upstream_error', 'api_error'] },
        code: { type: 'string' },
        message: { type: 'string' },
        param: { type: 'string' },
        requestId: { type: 'string' },
      },
    },
  },
};

/** Named schemas (zod `.meta({ id })`) shared by every operation, as `components.schemas`. */
type Components = Record<string, unknown>;

/**
 * One zod schema as JSON Schema. zod puts named sub-schemas in the schema's own `$defs` and
 * points at them with `#/$defs/<id>`, which resolves against the document root in OpenAPI: they
 * are moved to `components.schemas` and the references rewritten, so the document validates.
 */
function toSchema(schema: z.ZodType, io: 'input' | 'output', components: Components): Record<string, unknown> {
  const s = z.toJSONSchema(schema, { io, unrepresentable: 'any', target: 'draft-2020-12' }) as Record<string, unknown>;
  delete s.$schema;
  const defs = (s.$defs ?? {}) as Record<string, unknown>;
  delete s.$defs;
  for (const [id, def] of Object.entries(defs)) components[componentName(id, io)] = rewriteRefs(def, io);
  return rewriteRefs(s, io) as Record<string, unknown>;
}

/** Input and output shapes of one named schema can differ (defaults, transforms). */
const componentName = (id: string, io: 'input' | 'output') => (io === 'input' ? `${id}Input` : id);

function rewriteRefs(node: unknown, io: 'input' | 'output'): unknown {
  if (Array.isArray(node)) return node.map((n) => rewriteRefs(n, io));
  if (!node || typeof node !== 'object') return node;
  const out: Record<string, unknown> = {};
  for (const [k, v] of Object.entries(node)) {
    out[k] = k === '$ref' && typeof v === 'string' && v.startsWith('#/$defs/') ? `#/components/schemas/${componentName(v.slice(8), io)}` : rewriteRefs(v, io);
  }
  return out;
}

function parameters(route: RouteDef, components: Components): unknown[] {
  const out: unknown[] = [];
  for (const [where, schema] of [['path', route.params], ['query', route.query]] as const) {
    if (!schema) continue;
    const json = toSchema(schema, 'input', components) as { properties?: Record<string, unknown>; required?: string[] };
    for (const [name, prop] of Object.entries(json.properties ?? {})) {
      out.push({ name, in: where, required: where === 'path' || (json.required ?? []).includes(name), schema: prop });
    }
  }
  return out;
}

/** The OpenAPI 3.1 document of every route, generated from the same zod schemas that validate. */
export function buildOpenApi(serverUrl: string): Record<string, unknown> {
  const paths: Record<string, Record<string, unknown>> = {};
  const components: Components = { Error: errorSchema };
  for (const route of allRoutes) {
    const path = route.url.replace(/:(\w+)/g, '{$1}');
    const responses: Record<string, unknown> = {};
    for (const [status, r] of Object.entries(route.responses)) {
      responses[status] = r.schema
        ? { description: r.description, content: { 'application/json': { schema: toSchema(r.schema, 'output', components) } } }
        : { description: r.description };
    }
    responses.default = { description: 'Error', content: { 'application/json': { schema: { $ref: '#/components/schemas/Error' } } } };
    const op: Record<string, unknown> = {
      operationId: route.operationId,
      summary: route.summary,
      tags: route.tags,
      parameters: parameters(route, components),
      responses,
    };
    if (route.auth === 'secret') op.security = [{ apiKey: [] }];
    if (route.body) op.requestBody = { required: !route.bodyOptional, content: { 'application/json': { schema: toSchema(route.body, 'input', components) } } };
    (paths[path] ??= {})[route.method.toLowerCase()] = op;
  }
  return {
    openapi: '3.1.0',
    info: { title: 'Malipo API', version: '1.0.0', description: 'Payment links paid by M-Pesa or USDT.' },
    servers: [{ url: serverUrl }],
    paths,
    components: {
      securitySchemes: { apiKey: { type: 'apiKey', in: 'header', name: 'x-api-key' } },
      schemas: Object.fromEntries(Object.entries(components).sort(([a], [b]) => a.localeCompare(b))),
    },
  };
}
