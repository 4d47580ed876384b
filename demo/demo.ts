import { createHash } from 'node:crypto';
import { join } from 'node:path';
import bs58 from 'bs58';
import { createStore } from '../db/store-repo.js';
import { addStoreOwner } from '../services/dashboard/accounts.js';
import { openPool } from '../db/pool.js';
import { startDarajaEmulator, type DarajaEmulator } from '../emulators/daraja/server.js';
import { connectBody, sandboxPaybill, sandboxTestPhone } from '../emulators/daraja/sandbox.js';
import { startSolanaEmulator, type SolanaEmulator } from '../emulators/solana/server.js';
import { startTronGridEmulator, type TronGridEmulator } from '../emulators/trongrid/server.js';
import { loadConfig } from '../config/config.js';
import { demoChainId, startDemoChain, type DemoChain } from './chain.js';
import { addDemoDestinations } from './destinations.js';
import { demoDataDir, readDemoState, writeDemoState, type DemoState } from './state.js';
import { startDemoWebhookReceiver, type DemoWebhookReceiver } from './webhooks.js';
import { createLogger, startServices, type Running } from '../runtime/services.js';
import { ensureTemporalCli } from '../runtime/temporal-cli.js';

/**
 * `npm run demo`: the whole product offline on one machine. The embedded stack (PGlite, Temporal
 * dev server, worker, API) with the Daraja emulator (prompts approve themselves), anvil playing
 * BSC, Ethereum and Polygon with test USDT contracts, the TronGrid and Solana emulators, all wired
 * through the documented variables (MPESA_SANDBOX_URL, RPC_URL_<RAIL>_TEST,
 * USDT_CONTRACT_<RAIL>_TEST, CHAIN_ID_<RAIL>_TEST, CONFIRMATIONS_<RAIL>); a demo store with
 * every rail connected and a webhook receiver registered. The demo store lives in test mode
 * only, so its test keys are printed at every start (see docs/demo.md).
 */

// Public reference data: account xpubs of the BIP39 test mnemonic "abandon … about" (docs/wallets.md).
const demoEvmXpub = 'xpub6DCoCpSuQZB2jawqnGMEPS63ePKWkwWPH4TU45Q7LPXWuNd8TMtVxRrgjtEshuqpK3mdhaWHPFsBngh5GFZaM6si3yZdUsT8ddYM3PwnATt';
const demoTronXpub = 'xpub6D1AabNHCupeiLM65ZR9UStMhJ1vCpyV4XbZdyhMZBiJXALQtmn9p42VTQckoHVn8WNqS7dqnJokZHAHcHGoaQgmv8D45oNUKx6DZMNZBCd';
const demoSolanaWallet = '9WzDXwBbmkg8ZTbNMqUxvQRAyrZzDsGYdLVL9zYtAWWM';
/** The TRON test USDT the emulator serves (the Nile contract address, so the default applies). */
const demoTronContract = 'TXYZopYRdj2D9XRtbG411XZZ3kM5VkAeBf';
/** A made-up SPL mint on the Solana emulator (32 bytes, base58). */
const demoSolanaMint = bs58.encode(createHash('sha256').update('malipo demo USDT mint').digest());
const demoLinkUsdt = '5';
const demoRails = ['MOBILE_MONEY', 'USDT_BSC', 'USDT_ETH', 'USDT_POLYGON', 'USDT_TRON', 'USDT_SOL'];

const portOf = (env: NodeJS.ProcessEnv, name: string, fallback: number) => {
  const n = Number(env[name] ?? fallback);
  if (!Number.isInteger(n) || n < 1 || n > 65535) throw new Error(`${name} must be a port number`);
  return n;
};

export interface DemoPorts {
  api: number;
  temporal: number;
  temporalUi: number;
  anvil: number;
  daraja: number;
  trongrid: number;
  solana: number;
  webhooks: number;
}

export function demoPorts(env: NodeJS.ProcessEnv = process.env): DemoPorts {
  return {
    api: portOf(env, 'PORT', 3000),
    temporal: portOf(env, 'TEMPORAL_PORT', 7233),
    temporalUi: portOf(env, 'TEMPORAL_UI_PORT', 8233),
    anvil: portOf(env, 'DEMO_ANVIL_PORT', 8545),
    daraja: portOf(env, 'DEMO_DARAJA_PORT', 8089),
    trongrid: portOf(env, 'DEMO_TRONGRID_PORT', 8090),
    solana: portOf(env, 'DEMO_SOLANA_PORT', 8899),
    webhooks: portOf(env, 'DEMO_WEBHOOK_PORT', 3001),
  };
}

export async function runDemo(env: NodeJS.ProcessEnv = process.env): Promise<void> {
  const dataDir = demoDataDir(env);
  const ports = demoPorts(env);
  const stops: (() => Promise<void>)[] = [];
  const stopAll = async () => {
    for (const s of stops.splice(0).reverse()) await s().catch((err) => console.error(`demo: error while stopping: ${(err as Error).message}`));
  };
  let stopping = false;
  const shutdown = (signal: string) => {
    if (stopping) return;
    stopping = true;
    console.log(`\n${signal}: stopping the demo…`);
    void stopAll().then(() => process.exit(0));
  };
  process.on('SIGINT', () => shutdown('SIGINT'));
  process.on('SIGTERM', () => shutdown('SIGTERM'));

  try {
    const state = await readDemoState(dataDir);
    console.log(`Starting the Malipo demo (offline, test mode) in ${dataDir}…`);
    // The Temporal CLI first, so that a first run's download or build reports its progress here
    // (the demo's services log only warnings).
    const temporalCli = env.TEMPORAL_ADDRESS ? undefined : await ensureTemporalCli({
      explicitPath: env.TEMPORAL_CLI_PATH || undefined, downloadBase: env.TEMPORAL_CLI_DOWNLOAD_BASE, log: (m) => console.log(m),
    });
    const chain: DemoChain = await startDemoChain({ dataDir, port: ports.anvil, known: state.tokens });
    stops.push(() => chain.stop());
    const paybill = sandboxPaybill('demo');
    const daraja: DarajaEmulator = await startDarajaEmulator({
      merchants: [paybill], port: ports.daraja, autoCompleteMs: Number(env.DEMO_MPESA_APPROVE_MS ?? 3000),
    });
    stops.push(() => daraja.close());
    const trongrid: TronGridEmulator = await startTronGridEmulator({ port: ports.trongrid });
    trongrid.addToken(demoTronContract);
    stops.push(() => trongrid.close());
    const solana: SolanaEmulator = await startSolanaEmulator({ port: ports.solana });
    solana.ledger.addMint(demoSolanaMint, 6);
    stops.push(() => solana.close());

    const apiUrl = env.PUBLIC_BASE_URL ?? `http://127.0.0.1:${ports.api}`;
    const config = loadConfig({
      LOG_LEVEL: 'warn',
      CHAIN_POLL_MS: '1000',
      MPESA_QUERY_AFTER_SECONDS: '10',
      WEBHOOK_RETRY_SCALE: '0.01',
      // The owner's destination is usable at once, for `npm run demo:sweep` (24 h otherwise).
      TREASURY_DESTINATION_DELAY_SECONDS: '0',
      ...env,
      ...(temporalCli ? { TEMPORAL_CLI_PATH: temporalCli } : {}),
      DATA_DIR: dataDir,
      PORT: String(ports.api),
      TEMPORAL_PORT: String(ports.temporal),
      TEMPORAL_UI_PORT: String(ports.temporalUi),
      PUBLIC_BASE_URL: apiUrl,
      CHAIN_WATCHERS: 'on',
      MPESA_SANDBOX_URL: daraja.url,
      RPC_URL_USDT_BSC_TEST: chain.url,
      CHAIN_ID_USDT_BSC_TEST: String(demoChainId),
      USDT_CONTRACT_USDT_BSC_TEST: chain.tokens.USDT_BSC,
      CONFIRMATIONS_USDT_BSC: '2',
      RPC_URL_USDT_ETH_TEST: chain.url,
      CHAIN_ID_USDT_ETH_TEST: String(demoChainId),
      USDT_CONTRACT_USDT_ETH_TEST: chain.tokens.USDT_ETH,
      CONFIRMATIONS_USDT_ETH: '2',
      RPC_URL_USDT_POLYGON_TEST: chain.url,
      CHAIN_ID_USDT_POLYGON_TEST: String(demoChainId),
      USDT_CONTRACT_USDT_POLYGON_TEST: chain.tokens.USDT_POLYGON,
      CONFIRMATIONS_USDT_POLYGON: '2',
      RPC_URL_USDT_TRON_TEST: trongrid.url,
      USDT_CONTRACT_USDT_TRON_TEST: demoTronContract,
      CONFIRMATIONS_USDT_TRON: '1',
      RPC_URL_USDT_SOL_TEST: solana.url,
      USDT_CONTRACT_USDT_SOL_TEST: demoSolanaMint,
    });
    const running: Running = await startServices(config, createLogger(config), { api: true, worker: true });
    stops.push(() => running.stop());

    const receiver: DemoWebhookReceiver = await startDemoWebhookReceiver({
      port: ports.webhooks, logFile: join(dataDir, 'webhooks.log'), print: (line) => console.log(line),
    });
    stops.push(() => receiver.close());

    const api = apiClient(`http://127.0.0.1:${ports.api}`);
    if (!state.clientId || !state.testKeys) {
      const pool = await openPool(running.databaseUrl, 1);
      try {
        const store = await createStore(pool, 'Demo shop', config.keyPrefix);
        Object.assign(state, { clientId: store.clientId, storeName: store.name, testKeys: store.keys.test });
      } finally {
        await pool.end();
      }
    }
    if (!state.dashboard) {
      // A data dir from before dashboard accounts, or a first run: the owner's account, made once.
      const pool = await openPool(running.databaseUrl, 1);
      try {
        const owner = await addStoreOwner({ pool }, state.clientId!, demoOwnerEmail);
        if (owner.password) state.dashboard = { email: owner.email, password: owner.password };
      } finally {
        await pool.end();
      }
    }
    {
      const pool = await openPool(running.databaseUrl, 1);
      try {
        await addDemoDestinations(pool, config, state.clientId!, state.dashboard?.email ?? demoOwnerEmail);
      } finally {
        await pool.end();
      }
    }
    Object.assign(state, { apiUrl, anvilUrl: chain.url, tokens: chain.tokens, payer: chain.payer, darajaUrl: daraja.url });
    await writeDemoState(dataDir, state);
    const key = state.testKeys!.secretKey;
    const client = state.clientId!;

    // Connecting again at each start is harmless (same keys, same paybill) and heals a half-done first run.
    await api.call('PUT', `/v1/merchant/clients/${client}/wallets/evm`, key, { xpub: demoEvmXpub });
    await api.call('PUT', `/v1/merchant/clients/${client}/wallets/tron`, key, { xpub: demoTronXpub });
    await api.call('PUT', `/v1/merchant/clients/${client}/wallets/solana`, key, { address: demoSolanaWallet });
    await api.call('POST', `/v1/merchant/clients/${client}/mobile-money/connect`, key, connectBody(paybill));
    if (state.webhook?.url !== receiver.url) {
      if (state.webhook) await api.call('DELETE', `/v1/webhook-endpoints/${state.webhook.id}`, key, undefined, [200, 204, 404]);
      const endpoint = await api.call('POST', '/v1/webhook-endpoints', key, { url: receiver.url }) as { id: string; secret: string };
      state.webhook = { id: endpoint.id, url: receiver.url, secret: endpoint.secret };
      await writeDemoState(dataDir, state);
    }
    receiver.setSecret(state.webhook.secret);

    const newLink = async (ref: string) => api.call('POST', '/v1/payment-links', key, {
      usdtAmount: demoLinkUsdt, enabledRails: demoRails, description: 'Demo order', merchantRef: `${ref}-${Date.now()}`,
    }) as Promise<{ id: string; checkoutUrl: string }>;
    const mpesaLink = await newLink('demo-mpesa');
    const usdtLink = await newLink('demo-usdt');

    const dataFlag = dataDir === demoDataDir({}) ? '' : ` --data-dir ${shellQuote(dataDir)}`;
    console.log([
      '',
      'Malipo demo is ready (offline; test mode, no real money moves).',
      `  Store:         ${state.storeName} (${client})`,
      `  Test keys:     secret ${key}`,
      `                 publishable ${state.testKeys!.publishableKey}`,
      '                 (local demo test keys, printed at every start; the demo keeps no live key)',
      `  Pay by M-Pesa: ${mpesaLink.checkoutUrl}`,
      `                 choose M-Pesa and enter the test phone ${sandboxTestPhone}; the prompt approves itself`,
      `  Pay in USDT:   npm run demo:pay -- ${usdtLink.id}${dataFlag}`,
      `                 sends ${demoLinkUsdt} USDT on the local BSC chain (checkout: ${usdtLink.checkoutUrl})`,
      `  Sweep:         npm run demo:sweep${dataFlag ? ` --${dataFlag}` : ''}`,
      '                 moves the paid USDT to the owner\'s destination, signed offline with the demo\'s test mnemonic',
      `  Dashboard:     ${apiUrl}/dashboard/login (sign in as ${state.dashboard?.email ?? demoOwnerEmail}${state.dashboard ? `, password ${state.dashboard.password}` : ''})`,
      `  Webhooks:      ${receiver.url} (verified events print here and go to ${join(dataDir, 'webhooks.log')})`,
      `  Temporal UI:   ${running.temporalUiUrl ?? running.temporalAddress}`,
      `  API:           ${apiUrl} (docs ${apiUrl}/v1/openapi.json)`,
      `  Data:          ${dataDir} (a second run reuses it)    Stop: Ctrl-C`,
      '',
    ].join('\n'));
  } catch (err) {
    console.error(`demo: could not start: ${(err as Error).message}`);
    await stopAll();
    process.exit(1);
  }
}

/** The demo store owner's dashboard email: a reserved domain, never a real mailbox. */
const demoOwnerEmail = 'owner@demo.malipo.test';

function shellQuote(s: string): string {
  return /^[\w@%+=:,./-]+$/.test(s) ? s : `'${s.replace(/'/g, `'\\''`)}'`;
}

/** A tiny JSON client for the demo's own API; any unexpected status stops the demo with the API's message. */
export function apiClient(base: string) {
  return {
    async call(method: string, path: string, key: string, body?: unknown, ok: number[] = [200, 201]): Promise<unknown> {
      const res = await fetch(`${base}${path}`, {
        method,
        headers: { 'x-api-key': key, ...(body === undefined ? {} : { 'content-type': 'application/json' }) },
        body: body === undefined ? undefined : JSON.stringify(body),
      });
      const text = await res.text();
      if (!ok.includes(res.status)) throw new Error(`${method} ${path} answered ${res.status}: ${text}`);
      return text ? JSON.parse(text) : undefined;
    },
  };
}
