// After every scenario: the dev server's histories join the artifacts, then the secret scan and
// the summary table. A broken promise (a count that must be zero, a secret found) fails the run.
import { join } from 'node:path';
import { tsImport } from 'tsx/esm/api';

export default async function globalTeardown() {
  const dir = process.env.CHAOS_RUN_DIR;
  const { saveDevServerHistories } = await tsImport('./dev-server-histories.ts', import.meta.url);
  await saveDevServerHistories(join(dir, 'artifacts', 'dev-server'));
  const { stopTestTemporal } = await tsImport('../../helpers/temporal-server.ts', import.meta.url);
  await stopTestTemporal();
  const { summarize } = await tsImport('./summary.ts', import.meta.url);
  const { text, failures } = await summarize(dir, process.env.CHAOS_PROFILE === 'ci' ? 'ci' : 'full');
  console.log(`\n${text}\n\n(run folder: ${dir})`);
  if (failures.length > 0) {
    process.exitCode = 1;
    throw new Error(`the chaos run broke a promise: ${failures.join('; ')}`);
  }
}
