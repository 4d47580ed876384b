// `npm run test:cluster`: the Temporal cluster on PostgreSQL instead of the dev server.
import { tsImport } from 'tsx/esm/api';

export default async function globalSetup() {
  const { startTestCluster } = await tsImport('./temporal-cluster.ts', import.meta.url);
  await startTestCluster();
}
