import { describe, expect, it } from '@jest/globals';
import { readdirSync, readFileSync, statSync } from 'node:fs';
import { dirname, join, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';

/**
 * Nothing outside `rails/` branches on a rail id or a rail family (issue 28): it asks the rail's
 * payment method or adapter (rails/methods.ts, rails/adapters.ts) or a capability it declares.
 * Adding a rail is then its folder and a registry line (docs/adding-a-rail.md).
 *
 * What counts as a branch, per line (the same patterns measured the count before and after):
 * - a rail id as a quoted string: 'MOBILE_MONEY', 'USDT_…' (comparisons, `includes`, `case`, records);
 * - a family compared or switched on: `=== 'tron'`, `'evm' !==`, `case 'solana'` (mpesa, tron, evm,
 *   solana, and the watch family sol_ref);
 * - a family handed to a family helper: `hasFamily('tron')`, `ofFamily('solana')`;
 * - a rail predicate helper: `isMobileMoney(`, `isTron(`/`isTronRail(`, `isEvm`, `isSolana`, `isMpesa`,
 *   `isUsdt` (an address check such as `isTronAddress`, or `isRailId` on the id list, is not one).
 * Each allowed file is listed with how many such lines it may have and why; a new line fails.
 */
const root = resolve(dirname(fileURLToPath(import.meta.url)), '..', '..');

const branchPatterns: RegExp[] = [
  /['"](MOBILE_MONEY|USDT_(?!CONTRACT\b)[A-Z0-9]+)['"]/,
  /[!=]==\s*['"](mpesa|tron|evm|solana|sol_ref)['"]|['"](mpesa|tron|evm|solana|sol_ref)['"]\s*[!=]==/,
  /\bcase\s+['"](mpesa|tron|evm|solana|sol_ref)['"]/,
  /Family\(\s*['"](mpesa|tron|evm|solana|sol_ref)['"]/,
  /\bis(MobileMoney|Mpesa|Tron|Evm|Solana|Usdt)(Rail)?\(/,
];

/** Folders that are not the product: stand-ins and tools pick a rail as their input. */
const notProduct = ['rails', 'test', 'node_modules', 'emulators', 'bench', 'demo', 'scripts', 'deploy', 'docs'];

/** Allowed lines per file, and why. Shrink it; never grow it without the reason in the issue. */
const allowed: Record<string, { lines: number; why: string }> = {
  'domain/rails.ts': { lines: 2, why: 'the list of rail ids itself (the API enums and OpenAPI are built from it)' },
  'services/payment-links/dto.ts': { lines: 2, why: "the spec's per-chain response fields (tronAddress, bscAddress, …): the one allowed mapping" },
  'services/wallets/derived-wallets.ts': { lines: 2, why: "the spec's derived-wallet networks (TRON and BSC) and their per-chain response fields" },
  'api/routes/wallets/derive.ts': { lines: 1, why: "the spec's derived-wallet networks (TRON and BSC): which watchers a derive starts" },
  'db/watch-repo.ts': { lines: 1, why: "the spec's derived-wallet networks in SQL: a derived key's watcher rail" },
};

function sourceFiles(dir: string): string[] {
  return readdirSync(join(root, dir)).flatMap((name) => {
    const path = dir === '.' ? name : `${dir}/${name}`;
    if (name.startsWith('.') || (dir === '.' && notProduct.includes(name))) return [];
    if (statSync(join(root, path)).isDirectory()) return sourceFiles(path);
    return /\.(ts|mjs)$/.test(name) ? [path] : [];
  });
}

/** The lines of a file that branch on a rail, by the patterns above. */
export function railBranches(text: string): string[] {
  return text.split('\n').filter((line) => branchPatterns.some((p) => p.test(line)));
}

describe('rail branches outside rails/', () => {
  const found = Object.fromEntries(
    sourceFiles('.')
      .map((file) => [file, railBranches(readFileSync(join(root, file), 'utf8'))] as const)
      .filter(([, lines]) => lines.length > 0),
  );

  it('appear only in the allowed files, no more often than allowed', () => {
    const over = Object.entries(found)
      .filter(([file, lines]) => lines.length > (allowed[file]?.lines ?? 0))
      .map(([file, lines]) => `${file}: ${lines.length} (allowed ${allowed[file]?.lines ?? 0})\n  ${lines.map((l) => l.trim()).join('\n  ')}`);
    expect(over).toEqual([]);
  });

  it('keeps the allow-list tight: an entry shrinks when its branches go', () => {
    const slack = Object.entries(allowed)
      .filter(([file, a]) => (found[file]?.length ?? 0) < a.lines)
      .map(([file, a]) => `${file}: allowed ${a.lines}, found ${found[file]?.length ?? 0}`);
    expect(slack).toEqual([]);
  });

  it('are recognised by the patterns (a family comparison, a rail id, a family helper, a predicate)', () => {
    const sample = [
      "if (facts.family === 'evm') {",
      "if (rail === 'MOBILE_MONEY') return null;",
      "case 'solana':",
      "const tron = hasFamily('tron');",
      'if (isMobileMoney(rail)) {',
      "const unit = methodOf(rail).amountUnit === 'KES';",
      'if (p.family === 4) return v4;',
    ].join('\n');
    expect(railBranches(sample)).toHaveLength(5);
  });
});
