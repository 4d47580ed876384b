// Driving `npm run demo` from outside, as a newcomer would: test/e2e/demo.test.ts and `npm run bench demo`.
import { execFile, spawn, type ChildProcess } from 'node:child_process';
import { promisify } from 'node:util';
import type { Browser } from 'playwright-core';
import { freePort } from './ports.js';
import { chooseRail } from './browser.js';

const run = promisify(execFile);

/** What `npm run demo` printed, parsed as a newcomer would read it. */
export interface DemoBanner {
  secretKey: string;
  mpesaCheckoutUrl: string;
  payCommand: string;
  /** `npm run demo:sweep …`: sweeps the paid USDT to the owner's destination. */
  sweepCommand: string;
  usdtLinkId: string;
  dashboardUrl: string;
  /** The demo store owner's dashboard account, printed with the dashboard's address. */
  dashboardEmail: string;
  dashboardPassword: string;
  temporalUi: string;
  phone: string;
}

export function parseBanner(out: string): DemoBanner {
  const m = (re: RegExp, what: string) => {
    const x = re.exec(out);
    if (!x) throw new Error(`the demo printed no ${what}:\n${out}`);
    return x[1]!;
  };
  const payCommand = m(/Pay in USDT:\s+(npm run demo:pay -- .+)$/m, 'USDT command').trim();
  return {
    secretKey: m(/Test keys:\s+secret (sk_test_\w+)/, 'secret key'),
    mpesaCheckoutUrl: m(/Pay by M-Pesa:\s+(\S+)/, 'checkout URL'),
    payCommand,
    sweepCommand: m(/Sweep:\s+(npm run demo:sweep.*)$/m, 'sweep command').trim(),
    usdtLinkId: m(/demo:pay -- (pl_\w+)/, 'USDT link'),
    dashboardUrl: m(/Dashboard:\s+(\S+)/, 'dashboard'),
    dashboardEmail: m(/Dashboard:\s+\S+ \(sign in as ([^\s,)]+)/, 'dashboard email'),
    dashboardPassword: m(/Dashboard:\s+\S+ \(sign in as \S+, password (\S+)\)$/m, 'dashboard password'),
    temporalUi: m(/Temporal UI:\s+(\S+)/, 'Temporal UI'),
    phone: m(/test phone (\d+)/, 'test phone'),
  };
}

export interface DemoProcess {
  child: ChildProcess;
  output(): string;
  waitFor(text: string | RegExp, timeoutMs: number): Promise<void>;
  stop(): Promise<number | null>;
}

/** `node bin/run-ts.mjs demo/main.ts` (what `npm run demo` runs) as a child with its own data and ports. */
export function spawnDemo(env: NodeJS.ProcessEnv): DemoProcess {
  const child = spawn(process.execPath, ['bin/run-ts.mjs', 'demo/main.ts'], { env, stdio: ['ignore', 'pipe', 'pipe'] });
  let out = '';
  child.stdout!.on('data', (d: Buffer) => void (out += d.toString()));
  child.stderr!.on('data', (d: Buffer) => void (out += d.toString()));
  const exited = new Promise<number | null>((r) => child.once('exit', (code) => r(code)));
  return {
    child,
    output: () => out,
    async waitFor(text, timeoutMs) {
      const deadline = Date.now() + timeoutMs;
      const has = () => (typeof text === 'string' ? out.includes(text) : text.test(out));
      while (!has()) {
        if (child.exitCode !== null) throw new Error(`the demo exited (${child.exitCode}) before "${text}":\n${out}`);
        if (Date.now() > deadline) throw new Error(`no "${text}" within ${timeoutMs} ms:\n${out}`);
        await new Promise((r) => setTimeout(r, 100));
      }
    },
    async stop() {
      if (child.exitCode === null) child.kill('SIGINT');
      return exited;
    },
  };
}

export async function demoEnv(dataDir: string): Promise<NodeJS.ProcessEnv> {
  const env: NodeJS.ProcessEnv = {
    ...process.env,
    DATA_DIR: dataDir,
    PORT: String(await freePort()),
    TEMPORAL_PORT: String(await freePort()),
    TEMPORAL_UI_PORT: String(await freePort()),
    DEMO_ANVIL_PORT: String(await freePort()),
    DEMO_DARAJA_PORT: String(await freePort()),
    DEMO_TRONGRID_PORT: String(await freePort()),
    DEMO_SOLANA_PORT: String(await freePort()),
    DEMO_WEBHOOK_PORT: String(await freePort()),
  };
  for (const name of ['DATABASE_URL', 'TEMPORAL_ADDRESS', 'PUBLIC_BASE_URL', 'LOG_LEVEL', 'NODE_OPTIONS']) delete env[name];
  return env;
}

/** Runs the printed USDT command exactly as printed, through a shell, from the repository. */
export async function runPayCommand(command: string, env: NodeJS.ProcessEnv): Promise<string> {
  const { stdout } = await run('sh', ['-c', command], { env, timeout: 90_000 });
  return stdout;
}

/** Pays by M-Pesa through the hosted checkout in Chromium, with the emulator's test phone. */
export async function payByMpesa(browser: Browser, banner: DemoBanner): Promise<void> {
  const page = await browser.newPage();
  await page.goto(banner.mpesaCheckoutUrl);
  await chooseRail(page, 'MOBILE_MONEY');
  await page.fill('#phone', banner.phone);
  await page.click('button[type=submit]');
  await page.getByTestId('final-state').waitFor({ timeout: 60_000 });
  const final = await page.getByTestId('final-state').textContent();
  if (!final?.includes('Payment received')) throw new Error(`the checkout ended with: ${final}`);
  await page.close();
}

