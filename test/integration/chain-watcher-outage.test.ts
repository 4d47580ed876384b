import { afterAll, beforeAll, describe, expect, it } from '@jest/globals';
import { createServer, connect, type Server, type Socket } from 'node:net';
import { createChainActivities } from '../../activities/chains/index.js';
import { OutageLog } from '../../rails/chain/outage.js';
import { loadConfig } from '../../config/config.js';
import { deployTestToken, startAnvil, type Anvil, type TestToken } from '../helpers/anvil.js';
import { freePort } from '../helpers/ports.js';
import { startStack, type Stack } from '../helpers/stack.js';

/**
 * A watcher whose node cannot be reached (an offline machine) logs the outage once, and once
 * more when the node answers again, instead of one failed activity per retry: the tick reports
 * the outage as a result with a backoff, changing nothing. Real anvil sits
 * behind a TCP relay that is switched off and on.
 */
class Relay {
  private server: Server | undefined;
  private readonly sockets = new Set<Socket>();
  constructor(readonly port: number, private readonly target: URL) {}

  async up(): Promise<void> {
    this.server = createServer((client) => {
      const upstream = connect(Number(this.target.port), this.target.hostname);
      for (const s of [client, upstream]) {
        this.sockets.add(s);
        s.on('close', () => this.sockets.delete(s)).on('error', () => s.destroy());
      }
      client.pipe(upstream).pipe(client);
    });
    await new Promise<void>((resolve) => this.server!.listen(this.port, '127.0.0.1', resolve));
  }

  async down(): Promise<void> {
    for (const s of this.sockets) s.destroy();
    await new Promise((resolve) => this.server?.close(resolve));
    this.server = undefined;
  }
}

let anvil: Anvil;
let usdt: TestToken;
let stack: Stack;

beforeAll(async () => {
  anvil = await startAnvil();
  usdt = await deployTestToken(anvil, { decimals: 18 });
  stack = await startStack();
}, 120_000);
afterAll(async () => {
  await stack?.stop();
  await anvil?.stop();
});

type Line = { level: 'warn' | 'info'; obj: Record<string, unknown>; msg: string };
function collectingLogger() {
  const lines: Line[] = [];
  return { lines, logger: { warn: (obj: object, msg: string) => lines.push({ level: 'warn', obj: obj as never, msg }), info: (obj: object, msg: string) => lines.push({ level: 'info', obj: obj as never, msg }) } as never };
}

describe('a watcher whose node is unreachable', () => {
  // USDT_SOL is left out: under jest, @solana/web3.js never settles a request to a refused port
  // (run under tsx, the same call rejects at once with `fetch failed`, which isUnreachable knows).
  it.each([['USDT_BSC', () => anvil.url]] as const)('%s: reports the outage as a result with a growing backoff, logs it once, and once more on recovery', async (rail, upstream) => {
    const relay = new Relay(await freePort(), new URL(upstream()));
    const url = `http://127.0.0.1:${relay.port}`;
    const config = loadConfig({
      DATABASE_URL: 'postgres://unused', TEMPORAL_ADDRESS: 'unused:7233', DATA_DIR: stack.config.dataDir,
      [`RPC_URL_${rail}_TEST`]: url, [`USDT_CONTRACT_${rail}_TEST`]: usdt.address,
    });
    const { lines, logger } = collectingLogger();
    const chains = createChainActivities({ pool: stack.pool, config, temporal: stack.temporal, logger });
    const tick = () => chains.scanChainTick({ rail, environment: 'test', cursor: null });

    const down = [await tick(), await tick(), await tick(), await tick()];
    expect(down.map((t) => ('retryAfterMs' in t ? t.retryAfterMs : null))).toEqual([1_000, 2_000, 4_000, 8_000]);
    expect(down.every((t) => t.cursor === null && t.caughtUp === false)).toBe(true);
    expect(lines).toHaveLength(1);
    expect(lines[0]).toMatchObject({ level: 'warn', obj: { watcher: `${rail}/test` }, msg: expect.stringContaining('unreachable') });
    expect(JSON.stringify(lines[0])).not.toContain(String(relay.port)); // no URL (it may carry a provider key)

    await relay.up();
    try {
      const up = await tick();
      expect('retryAfterMs' in up).toBe(false);
      expect(up.cursor).not.toBeNull();
      expect(lines).toHaveLength(2);
      expect(lines[1]).toMatchObject({ level: 'info', obj: { watcher: `${rail}/test`, failedTicks: 4 }, msg: 'chain node reachable again' });
      await tick();
      expect(lines).toHaveLength(2);
    } finally {
      await relay.down();
    }
    // A second outage is a new one: logged once again, backoff from the start.
    const again = await tick();
    expect('retryAfterMs' in again && again.retryAfterMs).toBe(1_000);
    expect(lines).toHaveLength(3);
  });

  it('reminds at most every 10 minutes while an outage lasts', () => {
    const { lines, logger } = collectingLogger();
    const outages = new OutageLog(logger);
    const t0 = 1_000_000;
    const waits: number[] = [];
    for (let m = 0; m <= 25; m++) waits.push(outages.failed('USDT_ETH/live', new TypeError('fetch failed'), t0 + m * 60_000));
    expect(waits.slice(0, 7)).toEqual([1_000, 2_000, 4_000, 8_000, 16_000, 30_000, 30_000]);
    expect(lines.map((l) => l.msg)).toEqual([expect.stringContaining('unreachable'), 'chain node still unreachable', 'chain node still unreachable']);
    outages.succeeded('USDT_ETH/live', t0 + 26 * 60_000);
    outages.succeeded('USDT_ETH/live', t0 + 27 * 60_000);
    expect(lines.map((l) => l.level)).toEqual(['warn', 'warn', 'warn', 'info']);
  });

  it('still fails the tick for a read error that is not an outage (a node answering garbage), so Temporal retries it', async () => {
    const config = loadConfig({
      DATABASE_URL: 'postgres://unused', TEMPORAL_ADDRESS: 'unused:7233', DATA_DIR: stack.config.dataDir,
      RPC_URL_USDT_BSC_TEST: `${stack.baseUrl}/not-a-node`, USDT_CONTRACT_USDT_BSC_TEST: usdt.address,
    });
    const { lines, logger } = collectingLogger();
    const chains = createChainActivities({ pool: stack.pool, config, temporal: stack.temporal, logger });
    await expect(chains.scanChainTick({ rail: 'USDT_BSC', environment: 'test', cursor: null })).rejects.toThrow();
    expect(lines).toEqual([]);
  });
});
