import { afterAll, beforeAll, describe, expect, it } from '@jest/globals';
import { execFile, type ChildProcess } from 'node:child_process';
import { readFileSync } from 'node:fs';
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { promisify } from 'node:util';
import { demoMerchants } from '../../emulators/daraja/cli.js';
import { startDarajaEmulator, type DarajaEmulator } from '../../emulators/daraja/server.js';
import { httpCall } from '../helpers/http.js';
import { embeddedEnv, startEmbedded, waitForOutput } from '../helpers/embedded-process.js';
import { eventually } from '../helpers/wait.js';

const run = promisify(execFile);

/**
 * The README's and docs/api.md's shell examples run as pasted against a fresh `npm start` (the
 * embedded default), in order: the placeholders a reader fills in (`sk_test_…`, `cli_…`, `pl_…`,
 * the port) are filled from what the earlier commands printed, nothing else is changed, and every
 * call must answer 2xx. The M-Pesa steps run against the Daraja emulator, as the page says.
 */

/** The fenced `bash` blocks of a markdown section (from its heading to the next heading of the same level). */
export function bashBlocks(markdown: string, heading: string): string[] {
  const lines = markdown.split('\n');
  const start = lines.findIndex((l) => l.replace(/^#+\s*/, '') === heading && l.startsWith('#'));
  if (start < 0) throw new Error(`no heading "${heading}"`);
  const level = /^#+/.exec(lines[start]!)![0].length;
  // A comment line in a code block (`# Register …`) is not a heading: fences are skipped.
  let fenced = false;
  const end = lines.findIndex((l, i) => {
    if (l.startsWith('```')) fenced = !fenced;
    return i > start && !fenced && /^#+\s/.test(l) && /^#+/.exec(l)![0].length <= level;
  });
  const section = lines.slice(start + 1, end < 0 ? undefined : end).join('\n');
  return [...section.matchAll(/```bash\n([\s\S]*?)```/g)].map((m) => m[1]!);
}

/** One command per logical line: continuations joined, comments and blank lines dropped. */
export function commandsOf(block: string): string[] {
  return block
    .replace(/\\\n\s*/g, ' ')
    .split('\n')
    .map((l) => l.replace(/\s+#\s.*$/, '').trim())
    .filter((l) => l !== '' && !l.startsWith('#'));
}

interface Filled {
  base: string;
  clientId?: string;
  secretKey?: string;
  linkId?: string;
}

/** Fills a reader's placeholders from earlier answers; a placeholder with nothing to fill it fails the test. */
function fill(command: string, f: Filled): string {
  const need = (value: string | undefined, what: string) => {
    if (!value) throw new Error(`"${command}" needs ${what}, which no earlier command printed`);
    return value;
  };
  let c = command.replaceAll('http://localhost:3000', f.base);
  if (c.includes('sk_test_…')) c = c.replaceAll('sk_test_…', need(f.secretKey, 'a secret key'));
  if (c.includes('cli_…')) c = c.replaceAll('cli_…', need(f.clientId, 'a client id'));
  if (c.includes('pl_…')) c = c.replaceAll('pl_…', need(f.linkId, 'a payment link id'));
  if (c.includes('…')) throw new Error(`"${c}" still has a placeholder nobody fills`);
  return c;
}

let dataDir: string;
let child: ChildProcess | undefined;
let daraja: DarajaEmulator;
let env: NodeJS.ProcessEnv;
let base: string;

beforeAll(async () => {
  dataDir = await mkdtemp(join(tmpdir(), 'malipo-readme-'));
  daraja = await startDarajaEmulator({ merchants: demoMerchants, autoCompleteMs: 500 });
  env = await embeddedEnv(dataDir, { MPESA_SANDBOX_URL: daraja.url });
  base = `http://127.0.0.1:${env.PORT}`;
  child = startEmbedded(env);
  // A first start bundles the workflows and migrates PGlite: seconds on a quiet machine, minutes on a busy one.
  await waitForOutput(child, 'Malipo is running.', 240_000);
}, 300_000);

afterAll(async () => {
  if (child && child.exitCode === null) {
    const exited = new Promise((r) => child!.once('exit', r));
    child.kill('SIGINT');
    await exited;
  }
  await daraja?.close();
  await rm(dataDir, { recursive: true, force: true });
});

/** Runs a page's commands in order, as a reader would paste them, and returns what each printed. */
async function runAsPasted(commands: string[], f: Filled): Promise<Array<{ command: string; status: number; body: string }>> {
  const results: Array<{ command: string; status: number; body: string }> = [];
  for (const raw of commands) {
    if (raw.startsWith('npm start') || raw.startsWith('npm run emulator:daraja')) continue; // already running
    if (raw.startsWith('npx malipo ')) {
      const { stdout } = await run('bash', ['-c', raw.replace(/^npx malipo /, `${process.execPath} bin/malipo.mjs `)], { env });
      const store = JSON.parse(stdout) as { clientId: string; keys: { test: { secretKey: string } } };
      [f.clientId, f.secretKey] = [store.clientId, store.keys.test.secretKey];
      continue;
    }
    const command = fill(raw, f);
    if (command.startsWith('export ')) {
      for (const [, name, value] of command.matchAll(/(\w+)=(\S+)/g)) env[name!] = value;
      continue;
    }
    expect(command).toMatch(/^curl /);
    const { stdout } = await run('bash', ['-c', `${command} -sS -w '\\n%{http_code}'`], { env });
    const status = Number(stdout.slice(stdout.lastIndexOf('\n') + 1));
    const body = stdout.slice(0, stdout.lastIndexOf('\n'));
    results.push({ command: raw, status, body });
    if (status < 200 || status > 299) throw new Error(`"${raw}" answered ${status}: ${body}`);
    const created = /"id":"(pl_[A-Za-z0-9]+)"/.exec(body);
    if (created && raw.includes('POST $API/v1/payment-links ')) f.linkId = created[1];
  }
  return results;
}

const link = async (f: Filled) => (await httpCall(base, { method: 'GET', url: `/v1/payment-links/${f.linkId}`, headers: { 'x-api-key': f.secretKey! } })).body;

describe('the examples run as pasted against npm start', () => {
  it("README's ten-line integration: store, wallet, webhook endpoint, link, simulated payment", async () => {
    const f: Filled = { base };
    const blocks = bashBlocks(readFileSync('README.md', 'utf8'), 'Integrate in ten lines');
    expect(blocks).toHaveLength(1);
    const results = await runAsPasted(commandsOf(blocks[0]!), f);
    expect(results.map((r) => r.status)).toEqual([200, 201, 201, 200]);
    expect(await link(f)).toMatchObject({ status: 'CONFIRMED', confirmedRail: 'USDT_BSC', merchantRef: 'order-42' });
  }, 120_000);

  it("docs/api.md's five minutes, M-Pesa included: every block in order, the M-Pesa link paid by the emulator's prompt", async () => {
    const f: Filled = { base };
    const blocks = bashBlocks(readFileSync('docs/api.md', 'utf8'), 'Five minutes with the API');
    expect(blocks).toHaveLength(3);
    await runAsPasted(commandsOf(blocks[0]!), f);
    await runAsPasted(commandsOf(blocks[1]!), f);
    expect(await link(f)).toMatchObject({ status: 'CONFIRMED', confirmedRail: 'USDT_BSC' });
    await runAsPasted(commandsOf(blocks[2]!), f);
    await eventually(async () => ((await link(f)).status === 'CONFIRMED' ? true : undefined), 'the M-Pesa link to confirm');
    expect(await link(f)).toMatchObject({ confirmedRail: 'MOBILE_MONEY', merchantRef: 'order-43', payer: '254708374149' });
  }, 120_000);
});

describe('placeholders', () => {
  it('refuses to run a command whose placeholder nothing filled', () => {
    expect(() => fill('curl $API/v1/payment-links/pl_…', { base: 'http://x' })).toThrow(/needs a payment link id/);
    expect(() => fill('curl -d \'{"key":"…"}\'', { base: 'http://x' })).toThrow(/still has a placeholder/);
  });
});
