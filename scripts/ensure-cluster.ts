// `npm run setup:cluster`: finds or builds the pinned Temporal server, its SQL tool and the UI server, and prints their paths.
import { ensureClusterBinaries } from '../runtime/cluster/binaries.js';

const paths = await ensureClusterBinaries({
  serverPath: process.env.TEMPORAL_SERVER_PATH,
  sqlToolPath: process.env.TEMPORAL_SQL_TOOL_PATH,
  uiServerPath: process.env.TEMPORAL_UI_SERVER_PATH,
  log: (m) => console.error(m),
});
console.log(JSON.stringify(paths));
