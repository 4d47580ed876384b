import { describe, expect, it } from '@jest/globals';
import { readdirSync, readFileSync, statSync } from 'node:fs';
import { dirname, join, relative, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';

/**
 * The house's rules (docs/architecture.md), checked on the import graph: each rule is a folder
 * whose files must not import (even for a type) from another folder.
 */
const root = resolve(dirname(fileURLToPath(import.meta.url)), '..', '..');

function sourceFiles(dir: string): string[] {
  return readdirSync(join(root, dir)).flatMap((name) => {
    const path = join(dir, name);
    if (statSync(join(root, path)).isDirectory()) return sourceFiles(path);
    return /\.(ts|mjs)$/.test(name) ? [path] : [];
  });
}

/** Every repository folder a file imports from (relative imports only), as `folder/…` paths. */
function importsOf(file: string): string[] {
  const text = readFileSync(join(root, file), 'utf8');
  const specs = [...text.matchAll(/(?:from|import)\s*\(?\s*['"](\.{1,2}\/[^'"]+)['"]/g)].map((m) => m[1]!);
  return specs.map((s) => relative(root, resolve(root, dirname(file), s)));
}

const rules: Array<{ from: string[]; never: string; why: string }> = [
  { from: ['api', 'web', 'services', 'activities', 'workflows', 'rails', 'runtime', 'worker', 'temporal-client', 'domain', 'db', 'bin'], never: 'emulators', why: 'the product never depends on its stand-ins' },
  { from: ['workflows'], never: 'temporal-client', why: 'workflow code never imports the client module' },
  { from: ['workflows'], never: 'db', why: 'workflows are deterministic: I/O only through activities' },
  { from: ['activities', 'api', 'web', 'services'], never: 'workflows', why: 'everything reaches workflows through temporal-client/' },
  { from: ['temporal-client'], never: 'workflows', why: 'the client shares only domain/workflow-contract.ts with workflows' },
  { from: ['activities', 'services', 'db', 'domain', 'rails'], never: 'api', why: 'only entry points know the transport' },
  { from: ['api', 'services', 'activities'], never: 'web', why: 'the API and the rules know no pages' },
  { from: ['web'], never: 'db', why: 'pages read through services, never rows' },
  { from: ['domain'], never: 'services', why: 'domain logic is pure' },
  { from: ['domain', 'rails/registry.ts', 'rails/facts.ts'], never: 'config', why: 'pure parts take no configuration' },
  { from: ['api', 'web', 'services', 'activities', 'workflows', 'rails', 'worker', 'temporal-client', 'db'], never: 'config', why: 'only the composition root (runtime/) reads the configuration; each part declares the settings it needs and is handed them' },
  { from: ['api', 'web', 'services', 'activities', 'workflows', 'rails', 'worker', 'temporal-client', 'domain', 'db', 'config'], never: 'runtime', why: 'runtime/ only starts the system: nothing depends on it' },
  { from: ['config'], never: 'services', why: 'config is a leaf' },
];

describe('SQL', () => {
  it('is written only in db/ (repositories and migrations)', () => {
    const product = ['api', 'web', 'services', 'activities', 'workflows', 'rails', 'worker', 'temporal-client', 'config', 'runtime', 'domain'];
    const offending = product.flatMap(sourceFiles).filter((file) => /\bsql\.(type|unsafe|fragment)\b/.test(readFileSync(join(root, file), 'utf8')));
    expect(offending).toEqual([]);
  });
});

describe('the import graph', () => {
  for (const rule of rules) {
    it(`${rule.from.join(', ')} never import ${rule.never}/ (${rule.why})`, () => {
      const files = rule.from.flatMap((f) => (f.endsWith('.ts') ? [f] : sourceFiles(f)));
      const offending = files.flatMap((file) => importsOf(file).filter((p) => p === rule.never || p.startsWith(`${rule.never}/`)).map((p) => `${file} → ${p}`));
      expect(offending).toEqual([]);
    });
  }
});
