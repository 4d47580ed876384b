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
  { from: ['services', 'domain', 'db', 'rails'], never: 'activities', why: 'activities call services, never the other way: the rules live in the service' },
  { from: ['activities', 'services', 'db', 'domain', 'rails'], never: 'api', why: 'only entry points know the transport' },
  { from: ['api', 'services', 'activities'], never: 'web', why: 'the API and the rules know no pages' },
  { from: ['web'], never: 'db', why: 'pages read through services, never rows' },
  { from: ['domain'], never: 'services', why: 'domain logic is pure' },
  { from: ['domain', 'rails/registry.ts', 'rails/facts.ts'], never: 'config', why: 'pure parts take no configuration' },
  { from: ['api', 'web', 'services', 'activities', 'workflows', 'rails', 'worker', 'temporal-client', 'db'], never: 'config', why: 'only the composition root (runtime/) reads the configuration; each part declares the settings it needs and is handed them' },
  { from: ['api', 'web', 'services', 'activities', 'workflows', 'rails', 'worker', 'temporal-client', 'domain', 'db', 'config'], never: 'runtime', why: 'runtime/ only starts the system: nothing depends on it' },
  { from: ['config'], never: 'services', why: 'config is a leaf' },
];

/** The product's runtime source folders (not tests, benches, emulators or scripts). */
const runtimeFolders = ['api', 'web', 'services', 'activities', 'workflows', 'rails', 'runtime', 'worker', 'temporal-client', 'config', 'domain', 'db', 'bin'];

/** The file an import specifier names (`./x.js` is `x.ts` on disk), or null when it is not a source file. */
function importedFile(path: string): string | null {
  const candidates = [path, path.replace(/\.js$/, '.ts'), path.replace(/\.mjs$/, '.mts'), `${path}.ts`, join(path, 'index.ts')];
  return candidates.find((c) => /\.(ts|mjs)$/.test(c) && statSync(join(root, c), { throwIfNoEntry: false })?.isFile()) ?? null;
}

/**
 * What a file loads when it runs: its relative imports and re-exports, static or dynamic, except
 * (unless `withTypes`) the `import type` / `export type` statements the compiler erases.
 */
function importsOfKind(file: string, withTypes: boolean): string[] {
  const text = readFileSync(join(root, file), 'utf8');
  const statements = [...text.matchAll(/\b(?:import|export)\s+(type\s+)?(?:[^'";]*?\bfrom\s*)?['"](\.{1,2}\/[^'"]+)['"]/g)];
  const dynamic = [...text.matchAll(/\bimport\s*\(\s*['"](\.{1,2}\/[^'"]+)['"]/g)].map((m) => m[1]!);
  const specs = [...statements.filter((m) => withTypes || !m[1]).map((m) => m[2]!), ...dynamic];
  return specs.map((s) => relative(root, resolve(root, dirname(file), s)));
}

/**
 * Every import cycle among the runtime source files, each once, as `a → b → a`: what they load
 * when they run, or (`withTypes`) every import, type-only ones included.
 */
function importCycles(withTypes = false): string[] {
  const files = runtimeFolders.flatMap(sourceFiles);
  const edges = new Map(files.map((f) => [f, [...new Set(importsOfKind(f, withTypes).map(importedFile).filter((t): t is string => t !== null))]]));
  const cycles = new Set<string>();
  const state = new Map<string, 'open' | 'done'>();
  const stack: string[] = [];
  const visit = (file: string): void => {
    state.set(file, 'open');
    stack.push(file);
    for (const next of edges.get(file) ?? []) {
      if (state.get(next) === 'open') {
        const loop = stack.slice(stack.indexOf(next));
        // The same loop found from another file is one cycle: name it from its smallest file.
        const start = loop.indexOf([...loop].sort()[0]!);
        const rotated = [...loop.slice(start), ...loop.slice(0, start)];
        cycles.add([...rotated, rotated[0]].join(' → '));
      } else if (!state.has(next)) visit(next);
    }
    stack.pop();
    state.set(file, 'done');
  };
  for (const f of files) if (!state.has(f)) visit(f);
  return [...cycles].sort();
}

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

describe('import cycles', () => {
  it('none among the runtime source files: a concern shared by two modules is extracted, never imported back', () => {
    expect(importCycles()).toEqual([]);
  });

  it('none through type-only imports either: a shared type sits in its own module (activities/deps.ts, services/system/readiness-check.ts)', () => {
    expect(importCycles(true)).toEqual([]);
  });
});
