// `npm run setup:temporal`: finds or builds the pinned Temporal CLI and prints its path.
import { ensureTemporalCli } from '../runtime/temporal-cli.js';

const path = await ensureTemporalCli({ explicitPath: process.env.TEMPORAL_CLI_PATH, log: (m) => console.error(m) });
console.log(path);
