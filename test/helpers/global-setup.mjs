// Jest loads global setup through CommonJS; tsx's scoped import runs our TypeScript ESM helper.
import { tsImport } from 'tsx/esm/api';

export default async function globalSetup() {
  const { checkTestPostgres, startTestTemporal } = await tsImport('./temporal-server.ts', import.meta.url);
  const { writeSharedWorkflowBundle } = await tsImport('./workflow-bundle.ts', import.meta.url);
  const { createTemplateDatabase } = await tsImport('./database.ts', import.meta.url);
  // The three are independent: the server starts while webpack bundles and the template migrates.
  await checkTestPostgres();
  await Promise.all([startTestTemporal(), writeSharedWorkflowBundle(), createTemplateDatabase()]);
}
