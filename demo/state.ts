import { chmod, mkdir, readFile, rename, writeFile } from 'node:fs/promises';
import { join, resolve } from 'node:path';

/**
 * What `npm run demo` remembers between runs, in `DATA_DIR/demo.json` (mode 0600): the demo
 * store's id and TEST keys, its webhook endpoint and secret, and where the local chain and its
 * tokens are (for `npm run demo:pay`). Test keys only: the store's live keys are never kept.
 */
export interface DemoState {
  clientId?: string;
  storeName?: string;
  testKeys?: { secretKey: string; publishableKey: string };
  webhook?: { id: string; url: string; secret: string };
  /** The demo store owner's dashboard account (a local demo password, printed at every start). */
  dashboard?: { email: string; password: string };
  apiUrl?: string;
  /** The Daraja emulator (for `npm run demo:pay -- --paybill`). */
  darajaUrl?: string;
  anvilUrl?: string;
  /** Token contract per EVM rail on the local chain. */
  tokens?: Partial<Record<'USDT_BSC' | 'USDT_ETH' | 'USDT_POLYGON', string>>;
  /** The funded anvil account demo:pay sends from. */
  payer?: string;
}

export const defaultDemoDataDir = './data/demo';

export const demoDataDir = (env: NodeJS.ProcessEnv = process.env) => resolve(env.DATA_DIR || defaultDemoDataDir);
const stateFile = (dataDir: string) => join(dataDir, 'demo.json');

export async function readDemoState(dataDir: string): Promise<DemoState> {
  try {
    return JSON.parse(await readFile(stateFile(dataDir), 'utf8')) as DemoState;
  } catch (err) {
    if ((err as NodeJS.ErrnoException).code === 'ENOENT') return {};
    throw err;
  }
}

export async function writeDemoState(dataDir: string, state: DemoState): Promise<void> {
  await mkdir(dataDir, { recursive: true });
  const tmp = `${stateFile(dataDir)}.tmp`;
  await writeFile(tmp, JSON.stringify(state, null, 2), { mode: 0o600 });
  await chmod(tmp, 0o600);
  await rename(tmp, stateFile(dataDir));
}
