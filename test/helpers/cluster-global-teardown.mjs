import { tsImport } from 'tsx/esm/api';

export default async function globalTeardown() {
  const { stopTestCluster } = await tsImport('./temporal-cluster.ts', import.meta.url);
  await stopTestCluster();
}
