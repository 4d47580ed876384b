import { describe, expect, it } from '@jest/globals';
import { readFileSync } from 'node:fs';

/**
 * What `npm ci` demands of package-lock.json, checked without a registry (CI proves it for real:
 * .ci/run installs with `npm ci`). docs/dependencies.md says why the lockfile lists every
 * platform's optional binaries.
 */
interface LockEntry {
  version?: string;
  dependencies?: Record<string, string>;
  optionalDependencies?: Record<string, string>;
  hasInstallScript?: boolean;
}
const lock = JSON.parse(readFileSync('package-lock.json', 'utf8')) as { packages: Record<string, LockEntry> };
const pkg = JSON.parse(readFileSync('package.json', 'utf8')) as { allowScripts: Record<string, boolean> };

/** Node's lookup: the package's own node_modules, then each enclosing one, up to the root's. */
function resolves(from: string, dep: string): boolean {
  let base = from;
  for (;;) {
    if (lock.packages[base ? `${base}/node_modules/${dep}` : `node_modules/${dep}`]) return true;
    if (!base) return false;
    const i = base.lastIndexOf('/node_modules/');
    base = i === -1 ? '' : base.slice(0, i);
  }
}

describe('package-lock.json', () => {
  it("locks every dependency of every locked package, every platform's optional binaries included (else npm ci refuses the lockfile)", () => {
    const missing: string[] = [];
    for (const [path, entry] of Object.entries(lock.packages)) {
      for (const dep of Object.keys({ ...entry.dependencies, ...entry.optionalDependencies })) {
        if (!resolves(path, dep)) missing.push(`${dep} (for ${path || 'the root'})`);
      }
    }
    expect(missing).toEqual([]);
  });

  it('has a decision in allowScripts for every locked package with an install script (else npm warns and skips it)', () => {
    const undecided = Object.entries(lock.packages)
      .filter(([, e]) => e.hasInstallScript)
      .map(([path, e]) => ({ name: path.slice(path.lastIndexOf('node_modules/') + 'node_modules/'.length), version: e.version }))
      .filter(({ name, version }) => !(name in pkg.allowScripts) && !(`${name}@${version}` in pkg.allowScripts));
    expect(undecided).toEqual([]);
  });
});
