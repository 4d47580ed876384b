interface Operation {
  operationId: string;
  summary: string;
  tags: string[];
  security?: unknown[];
  parameters: { name: string; in: string; required: boolean; schema: Record<string, unknown> }[];
  requestBody?: { content: { 'application/json': { schema: unknown } } };
  responses: Record<string, { description: string; content?: { 'application/json': { schema: unknown } } }>;
}
interface OpenApi {
  info: { title: string; description: string };
  servers: { url: string }[];
  paths: Record<string, Record<string, Operation>>;
}

const esc = (s: string): string => s.replace(/[&<>"']/g, (c) => ({ '&': '&amp;', '<': '&lt;', '>': '&gt;', '"': '&quot;', "'": '&#39;' })[c]!);

function schemaBlock(schema: unknown): string {
  return `<pre>${esc(JSON.stringify(schema, null, 2))}</pre>`;
}

function curlExample(method: string, path: string, op: Operation, server: string): string {
  const auth = op.security ? ` \\\n  -H "x-api-key: $SECRET_KEY"` : '';
  const body = op.requestBody ? ` \\\n  -H 'content-type: application/json' -d '{…}'` : '';
  return `<pre class="curl">curl -X ${method.toUpperCase()} ${esc(server + path.replace(/\{(\w+)\}/g, ':$1'))}${auth}${body}</pre>`;
}

function operationHtml(method: string, path: string, op: Operation, server: string): string {
  const params = op.parameters.length
    ? `<h4>Parameters</h4><table><tr><th>name</th><th>in</th><th>required</th><th>schema</th></tr>${op.parameters
        .map((p) => `<tr><td><code>${esc(p.name)}</code></td><td>${esc(p.in)}</td><td>${p.required ? 'yes' : 'no'}</td><td><code>${esc(JSON.stringify(p.schema))}</code></td></tr>`)
        .join('')}</table>`
    : '';
  const body = op.requestBody ? `<h4>Request body</h4>${schemaBlock(op.requestBody.content['application/json'].schema)}` : '';
  const responses = Object.entries(op.responses)
    .filter(([status]) => status !== 'default')
    .map(([status, r]) => `<h4>${esc(status)} — ${esc(r.description)}</h4>${r.content ? schemaBlock(r.content['application/json'].schema) : ''}`)
    .join('');
  return `<section id="${esc(op.operationId)}">
<h3><span class="method ${method}">${method.toUpperCase()}</span> <code>${esc(path)}</code></h3>
<p>${esc(op.summary)} <span class="auth">${op.security ? 'secret key (x-api-key)' : path.includes('client/{clientId}') ? 'publishable key (pk)' : 'no key'}</span></p>
${curlExample(method, path, op, server)}${params}${body}${responses}
</section>`;
}

/** A readable, dependency-free rendering of the OpenAPI document: a table of contents and every operation. */
export function renderApiReference(doc: OpenApi): string {
  const server = doc.servers[0]?.url ?? '';
  const byTag = new Map<string, string[]>();
  const toc = new Map<string, string[]>();
  for (const [path, methods] of Object.entries(doc.paths)) {
    for (const [method, op] of Object.entries(methods)) {
      const tag = op.tags[0] ?? 'Other';
      byTag.set(tag, [...(byTag.get(tag) ?? []), operationHtml(method, path, op, server)]);
      toc.set(tag, [...(toc.get(tag) ?? []), `<li><a href="#${esc(op.operationId)}">${method.toUpperCase()} ${esc(path)}</a></li>`]);
    }
  }
  return `<!doctype html>
<html lang="en"><head><meta charset="utf-8"><meta name="viewport" content="width=device-width, initial-scale=1">
<title>${esc(doc.info.title)} reference</title><link rel="stylesheet" href="/static/docs/docs.css"></head>
<body><nav><h1>${esc(doc.info.title)}</h1><p><a href="/v1/openapi.json">OpenAPI 3.1 JSON</a></p>
${[...toc].map(([tag, items]) => `<h2>${esc(tag)}</h2><ul>${items.join('')}</ul>`).join('')}</nav>
<main><p>${esc(doc.info.description)} Errors are <code>{"error":{"type","code","message","param"?,"requestId"}}</code>.</p>
${[...byTag].map(([tag, ops]) => `<h2>${esc(tag)}</h2>${ops.join('')}`).join('')}</main></body></html>`;
}
