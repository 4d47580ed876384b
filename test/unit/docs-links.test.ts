import { describe, expect, it } from '@jest/globals';
import { existsSync, readFileSync, readdirSync, statSync } from 'node:fs';
import { dirname, join, relative, resolve } from 'node:path';

/**
 * The README is short and points into docs/, so a link that no longer resolves is a newcomer's
 * dead end. Every relative Markdown link in README.md and docs/**\/*.md must name a file or folder
 * that exists, and an anchor must name a heading of the target as GitHub slugs it.
 */
const root = process.cwd();

/**
 * docs/tracing.md is being written in another branch of the same issue; until it is merged here,
 * links to it are let through. Only while the file is missing: once it exists it is checked like
 * any other.
 */
const pendingFiles = new Set(['docs/tracing.md'].filter((f) => !existsSync(join(root, f))));

function markdownFiles(dir: string): string[] {
  return readdirSync(dir).flatMap((name) => {
    const path = join(dir, name);
    if (statSync(path).isDirectory()) return markdownFiles(path);
    return name.endsWith('.md') ? [path] : [];
  });
}

/** The text outside fenced code blocks, line by line (code may contain `[x](y)` or `# comments`). */
function proseLines(text: string): string[] {
  let fence: string | null = null;
  const lines: string[] = [];
  for (const line of text.split('\n')) {
    const marker = /^\s*(```|~~~)/.exec(line)?.[1];
    if (marker !== undefined) {
      if (fence === null) fence = marker;
      else if (fence === marker) fence = null;
      lines.push('');
      continue;
    }
    lines.push(fence === null ? line : '');
  }
  return lines;
}

/** GitHub's heading anchor: lowercase, punctuation dropped, each space a hyphen; repeats get -1, -2. */
function githubSlug(heading: string): string {
  const text = heading
    .replace(/\[([^\]]*)\]\([^)]*\)/g, '$1') // a link in a heading keeps its text
    .trim()
    .toLowerCase();
  return text.replace(/[^\p{L}\p{N}\s_-]/gu, '').replace(/\s/g, '-');
}

function anchorsOf(file: string): Set<string> {
  const seen = new Map<string, number>();
  const anchors = new Set<string>();
  for (const line of proseLines(readFileSync(file, 'utf8'))) {
    const heading = /^#{1,6}\s+(.*?)\s*#*\s*$/.exec(line)?.[1];
    if (heading !== undefined) {
      const slug = githubSlug(heading);
      const n = seen.get(slug) ?? 0;
      seen.set(slug, n + 1);
      anchors.add(n === 0 ? slug : `${slug}-${n}`);
    }
    for (const m of line.matchAll(/<a\s+(?:id|name)="([^"]+)"/g)) anchors.add(m[1]!);
  }
  return anchors;
}

interface Link { file: string; line: number; target: string }

function linksOf(file: string): Link[] {
  return proseLines(readFileSync(file, 'utf8')).flatMap((line, i) =>
    [...line.replace(/`[^`]*`/g, '').matchAll(/!?\[[^\]]*\]\(\s*<?([^)\s>]+)>?(?:\s+"[^"]*")?\s*\)/g)].map((m) => ({
      file,
      line: i + 1,
      target: m[1]!,
    })),
  );
}

/** What is wrong with one link, or null when it resolves. */
function problemWith(link: Link): string | null {
  if (/^[a-z][a-z0-9+.-]*:/i.test(link.target)) return null; // https:, mailto: …: not ours to check
  const [pathPart, anchor] = link.target.split('#', 2) as [string, string | undefined];
  const target = pathPart === '' ? link.file : resolve(dirname(link.file), decodeURIComponent(pathPart));
  const shown = relative(root, target);
  if (pendingFiles.has(shown)) return null;
  if (!existsSync(target)) return `${shown} does not exist`;
  if (anchor === undefined || anchor === '') return null;
  if (!target.endsWith('.md')) return null; // line anchors into source files are GitHub's, not headings
  return anchorsOf(target).has(anchor) ? null : `${shown} has no heading with the anchor #${anchor}`;
}

const files = [join(root, 'README.md'), ...markdownFiles(join(root, 'docs'))];

describe('links in README.md and docs/', () => {
  it('every relative link names an existing file and, with an anchor, an existing heading', () => {
    const links = files.flatMap(linksOf);
    const broken = links.flatMap((link) => {
      const problem = problemWith(link);
      return problem === null ? [] : [`${relative(root, link.file)}:${link.line} (${link.target}): ${problem}`];
    });
    expect(links.length).toBeGreaterThan(100);
    expect(broken).toEqual([]);
  });

  it("slugs headings as GitHub does, so the check above can fail on an anchor", () => {
    expect(githubSlug('Running it: `npm run start:cluster`')).toBe('running-it-npm-run-startcluster');
    expect(githubSlug('Watching derived addresses (`transfer.confirmed`)')).toBe('watching-derived-addresses-transferconfirmed');
    expect(githubSlug('Errors, request bodies, idempotency, keys and rate limits')).toBe('errors-request-bodies-idempotency-keys-and-rate-limits');
    expect(githubSlug('Payment confirmed → first webhook attempt')).toBe('payment-confirmed--first-webhook-attempt');
    const broken = problemWith({ file: join(root, 'README.md'), line: 1, target: 'docs/payments.md#no-such-heading' });
    expect(broken).toBe('docs/payments.md has no heading with the anchor #no-such-heading');
    expect(problemWith({ file: join(root, 'README.md'), line: 1, target: 'docs/no-such-file.md' })).toBe('docs/no-such-file.md does not exist');
    expect(problemWith({ file: join(root, 'README.md'), line: 1, target: 'docs/payments.md#nothing-but-evidence-moves-money' })).toBeNull();
  });
});
