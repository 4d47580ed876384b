// `npm run start:cluster`: the production topology on one machine (docs/production.md).
import { loadConfig } from '../config/config.js';
import { runCluster } from '../runtime/cluster/run-cluster.js';

try {
  await runCluster(loadConfig(), process.env);
} catch (err) {
  console.error((err as Error).message);
  process.exit(1);
}
