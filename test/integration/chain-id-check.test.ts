import { afterAll, beforeAll, describe, expect, it } from '@jest/globals';
import { mkdtemp } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { Writable } from 'node:stream';
import pino from 'pino';
import { loggerOptions } from '../../api/plugins/log-redaction.js';
import { loadConfig } from '../../config/config.js';
import { railSettingsFrom } from '../../config/rail-settings.js';
import { randomToken } from '../../domain/ids.js';
import { checkChainIds, chainIdStatus, chainIdTargets } from '../../rails/evm/chain-id-check.js';
import { usableRailRpcUrls } from '../../rails/evm/chain-ids.js';
import { railFacts, usdtRails } from '../../rails/registry.js';
import { startServices, type Running } from '../../runtime/services.js';
import { startAnvil, type Anvil } from '../helpers/anvil.js';
import { createTestDatabase } from '../helpers/database.js';
import { httpCall } from '../helpers/http.js';
import { freePort } from '../helpers/ports.js';
import { startStack, type Stack } from '../helpers/stack.js';
import { TcpSwitch } from '../helpers/tcp-switch.js';
import { eventually } from '../helpers/wait.js';

/**
 * The chain-id check on real parts: anvil answers eth_chainId with 31337. An EVM rail configured
 * for 31337 uses it; one left on its public network's id (97, BSC testnet) does not, the process
 * says so once in its log, and GET /ready answers 503 naming the rail, both ids and no URL.
 */
type Line = Record<string, unknown> & { level: number; msg: string };

function capturingLogger() {
  const lines: Line[] = [];
  const stream = new Writable({
    write(chunk: Buffer, _enc, done) {
      for (const text of chunk.toString().split('\n').filter(Boolean)) lines.push(JSON.parse(text) as Line);
      done();
    },
  });
  return { lines, logger: pino(loggerOptions('info'), stream) };
}

/** Every EVM rail and environment with a token contract on `url`, so no public node is asked. */
function everyEvmRailOn(url: string, chainId: string): Record<string, string> {
  const evm = usdtRails.filter((rail) => railFacts[rail].family === 'evm');
  return Object.fromEntries(evm.flatMap((rail) => ['TEST', 'LIVE'].flatMap((env) => [[`RPC_URL_${rail}_${env}`, url], [`CHAIN_ID_${rail}_${env}`, chainId]])));
}

const chainIdLogs = (lines: Line[]) => lines.filter((l) => typeof l.rail === 'string' && 'expectedChainId' in l);

let anvil: Anvil;
beforeAll(async () => {
  anvil = await startAnvil();
});
afterAll(async () => anvil?.stop());

describe('an API process whose BSC test RPC is on another chain than configured', () => {
  let running: Running | undefined;
  let db: Awaited<ReturnType<typeof createTestDatabase>> | undefined;
  afterAll(async () => {
    await running?.stop();
    await db?.drop();
  });

  it('does not use it, logs it once at start without its URL, and answers 503 on GET /ready with the detail', async () => {
    db = await createTestDatabase();
    const port = await freePort();
    const env = {
      ...everyEvmRailOn(anvil.url, String(anvil.chainId)),
      // BSC's testnet is 97 by default: what the checkout named before the chain id was configurable.
      CHAIN_ID_USDT_BSC_TEST: undefined,
      DATABASE_URL: db.url,
      TEMPORAL_ADDRESS: process.env.MALIPO_TEST_TEMPORAL_ADDRESS!,
      TASK_QUEUE_PREFIX: `t${randomToken(8)}-`,
      DATA_DIR: await mkdtemp(join(tmpdir(), 'malipo-chain-ids-')),
      HOST: '127.0.0.1',
      PORT: String(port),
      LOG_LEVEL: 'info',
    };
    const config = loadConfig(Object.fromEntries(Object.entries(env).filter((e): e is [string, string] => e[1] !== undefined)));
    const { lines, logger } = capturingLogger();
    running = await startServices(config, logger, { api: true, worker: false });
    const baseUrl = `http://127.0.0.1:${port}`;

    const ready = await eventually(async () => {
      const res = await httpCall(baseUrl, { method: 'GET', url: '/ready' });
      return res.status === 503 ? res : undefined;
    }, 'GET /ready to answer 503');
    const bsc = ready.body.checks.find((c: { name: string }) => c.name === 'chain-id:USDT_BSC:test');
    expect(bsc).toEqual({
      name: 'chain-id:USDT_BSC:test',
      ok: false,
      detail: 'CHAIN_ID_USDT_BSC_TEST is 97: RPC 1 of 1 is on chain 31337 and is not used; 0 of 1 usable.',
      chainId: { rail: 'USDT_BSC', environment: 'test', expected: 97, rpcs: [{ rpc: 1, actual: 31337, verdict: 'wrong_chain' }], usable: 0 },
    });
    expect(ready.body.ready).toBe(false);
    // The other rails are configured for 31337: verified, usable, ok.
    const others = ready.body.checks.filter((c: { name: string }) => c.name.startsWith('chain-id:') && c.name !== 'chain-id:USDT_BSC:test');
    expect(others.map((c: { name: string }) => c.name).sort()).toEqual(
      ['chain-id:USDT_BSC:live', 'chain-id:USDT_ETH:live', 'chain-id:USDT_ETH:test', 'chain-id:USDT_POLYGON:live'],
    );
    expect(others.every((c: { ok: boolean; chainId: { rpcs: Array<{ verdict: string }> } }) => c.ok && c.chainId.rpcs[0]!.verdict === 'verified')).toBe(true);
    expect(ready.body.checks.find((c: { name: string }) => c.name === 'database')).toMatchObject({ ok: true });
    expect(ready.text).not.toContain(new URL(anvil.url).host);

    // The readers skip it: no BSC test RPC is left, the others keep theirs.
    expect(usableRailRpcUrls(config.rails, 'USDT_BSC', 'test')).toEqual([]);
    expect(usableRailRpcUrls(config.rails, 'USDT_ETH', 'test')).toEqual([anvil.url]);

    // Said once, at start, with the rail, environment and both ids; no line carries the node's address.
    const wrong = chainIdLogs(lines).filter((l) => l.level === 50);
    expect(wrong).toEqual([expect.objectContaining({
      rail: 'USDT_BSC', environment: 'test', expectedChainId: 97, actualChainId: 31337, rpc: 'RPC 1 of 1', setting: 'CHAIN_ID_USDT_BSC_TEST',
    })]);
    expect(JSON.stringify(lines)).not.toContain(new URL(anvil.url).host);
  });
});

describe('a process whose EVM RPCs are on their configured chain', () => {
  let stack: Stack | undefined;
  afterAll(async () => stack?.stop());

  it('uses them, and GET /ready answers 200 with each verdict', async () => {
    // The stack names 31337 for every EVM RPC it is pointed at (test/helpers/stack.ts).
    stack = await startStack(Object.fromEntries(Object.entries(everyEvmRailOn(anvil.url, '')).filter(([name]) => name.startsWith('RPC_URL_'))));
    const { logger } = capturingLogger();
    const check = checkChainIds(stack.config.rails, logger);
    await check.firstRound;
    check.stop();
    const res = await stack.request({ method: 'GET', url: '/ready' });
    expect(res.status).toBe(200);
    expect(res.body.ready).toBe(true);
    expect(res.body.checks.find((c: { name: string }) => c.name === 'chain-id:USDT_BSC:test')).toEqual({
      name: 'chain-id:USDT_BSC:test',
      ok: true,
      detail: 'CHAIN_ID_USDT_BSC_TEST is 31337: RPC 1 of 1 is on it; 1 of 1 usable.',
      chainId: { rail: 'USDT_BSC', environment: 'test', expected: 31337, rpcs: [{ rpc: 1, actual: 31337, verdict: 'verified' }], usable: 1 },
    });
    expect(usableRailRpcUrls(stack.config.rails, 'USDT_BSC', 'test')).toEqual([anvil.url]);
  });
});

describe('an RPC that cannot be reached at start', () => {
  it('is used meanwhile, asked again later, and judged once it answers (logged then, once)', async () => {
    const sw = await TcpSwitch.start(new URL(anvil.url).host);
    sw.off();
    const url = `http://${sw.address}`;
    // One node behind every EVM rail: BSC's testnet left at 97, the others configured for 31337.
    const rails = railSettingsFrom({ ...everyEvmRailOn(url, String(anvil.chainId)), CHAIN_ID_USDT_BSC_TEST: '97' });
    const { lines, logger } = capturingLogger();
    const check = checkChainIds(rails, logger, { timeoutMs: 1_000, retryFirstMs: 200 });
    try {
      await check.firstRound;
      const bscTest = chainIdTargets(rails).find((t) => t.rail === 'USDT_BSC' && t.environment === 'test')!;
      expect(chainIdStatus(bscTest)).toMatchObject({ usable: 1, rpcs: [{ verdict: 'unanswered', actual: null }] });
      expect(usableRailRpcUrls(rails, 'USDT_BSC', 'test')).toEqual([url]);
      expect(chainIdLogs(lines).filter((l) => l.level >= 50)).toEqual([]);

      sw.onAgain();
      await eventually(async () => (chainIdStatus(bscTest).rpcs[0]!.verdict === 'wrong_chain' ? true : undefined), 'the RPC to answer');
      expect(usableRailRpcUrls(rails, 'USDT_BSC', 'test')).toEqual([]);
      expect(usableRailRpcUrls(rails, 'USDT_ETH', 'live')).toEqual([url]);
      await new Promise((r) => setTimeout(r, 1_000));
      const errors = chainIdLogs(lines).filter((l) => l.level === 50);
      expect(errors).toEqual([expect.objectContaining({ rail: 'USDT_BSC', environment: 'test', expectedChainId: 97, actualChainId: 31337 })]);
      expect(JSON.stringify(lines)).not.toContain(sw.address);
    } finally {
      check.stop();
      await sw.close();
    }
  });
});
