import { readdir, readFile, stat } from 'node:fs/promises';
import { join, relative } from 'node:path';

export interface SecretHit {
  kind: string;
  file: string;
}

/** Every file under `dir`, recursively. */
async function filesUnder(dir: string): Promise<string[]> {
  const entries = await readdir(dir, { withFileTypes: true }).catch(() => []);
  const out: string[] = [];
  for (const e of entries) {
    const p = join(dir, e.name);
    if (e.isDirectory()) out.push(...(await filesUnder(p)));
    else if (e.isFile()) out.push(p);
  }
  return out;
}

/**
 * Looks for every registered secret (runDir/secrets/*.json) in every file the run left under
 * runDir/artifacts (logs, decoded workflow histories, database dumps). Returns each hit (the
 * secret's kind and the file, never the secret) and how much was read.
 */
export async function scanForSecrets(runDir: string): Promise<{ secrets: number; files: number; bytes: number; hits: SecretHit[] }> {
  const secretFiles = await filesUnder(join(runDir, 'secrets'));
  const secrets: Array<{ kind: string; value: string }> = [];
  for (const f of secretFiles) secrets.push(...(JSON.parse(await readFile(f, 'utf8')) as Array<{ kind: string; value: string }>));
  const unique = [...new Map(secrets.map((s) => [s.value, s])).values()];
  const files = await filesUnder(join(runDir, 'artifacts'));
  const hits: SecretHit[] = [];
  let bytes = 0;
  for (const file of files) {
    bytes += (await stat(file)).size;
    const text = await readFile(file, 'utf8');
    for (const s of unique) if (text.includes(s.value)) hits.push({ kind: s.kind, file: relative(runDir, file) });
  }
  return { secrets: unique.length, files: files.length, bytes, hits };
}
