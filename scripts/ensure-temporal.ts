// `npm run setup:temporal`: finds, downloads (checksum-verified) or builds the pinned Temporal CLI
// and prints its path on stdout; what it is doing goes to stderr.
import { ensureTemporalCli } from '../runtime/temporal-cli.js';

const path = await ensureTemporalCli({
  explicitPath: process.env.TEMPORAL_CLI_PATH,
  downloadBase: process.env.TEMPORAL_CLI_DOWNLOAD_BASE,
  log: (m) => console.error(m),
});
console.log(path);
