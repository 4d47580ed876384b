import { tsImport } from 'tsx/esm/api';

export default async function globalTeardown() {
  const { stopTestTemporal } = await tsImport('./temporal-server.ts', import.meta.url);
  const { removeSharedWorkflowBundle } = await tsImport('./workflow-bundle.ts', import.meta.url);
  const { dropTemplateDatabase } = await tsImport('./database.ts', import.meta.url);
  await Promise.all([stopTestTemporal(), removeSharedWorkflowBundle(), dropTemplateDatabase()]);
}
