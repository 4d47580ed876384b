// Jest loads global setup through CommonJS; tsx's scoped import runs our TypeScript ESM helper.
import { tsImport } from 'tsx/esm/api';

export default async function globalSetup() {
  const { startTestTemporal } = await tsImport('./temporal-server.ts', import.meta.url);
  await startTestTemporal();
  const { writeSharedWorkflowBundle } = await tsImport('./workflow-bundle.ts', import.meta.url);
  const { createTemplateDatabase } = await tsImport('./database.ts', import.meta.url);
  await Promise.all([writeSharedWorkflowBundle(), createTemplateDatabase()]);
}
