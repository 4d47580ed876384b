// `npm run test:chaos`: the shared dev server (as in `npm test`) and one run folder for every
// scenario's counts, secrets and artifacts (logs, decoded histories, database dumps).
import { mkdir } from 'node:fs/promises';
import { join } from 'node:path';
import { tsImport } from 'tsx/esm/api';

export default async function globalSetup() {
  const dir = process.env.CHAOS_RUN_DIR ?? join(process.cwd(), 'artifacts', 'chaos', new Date().toISOString().replace(/[:.]/g, '-'));
  await mkdir(dir, { recursive: true });
  process.env.CHAOS_RUN_DIR = dir;
  const { startTestTemporal } = await tsImport('../../helpers/temporal-server.ts', import.meta.url);
  await startTestTemporal();
}
