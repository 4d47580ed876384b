import { afterAll, describe, expect, it } from '@jest/globals';
import { execFile, type ChildProcess } from 'node:child_process';
import { mkdtemp, readFile, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { promisify } from 'node:util';
import { httpCall } from '../helpers/http.js';
import { embeddedEnv, startEmbedded, waitForOutput } from '../helpers/embedded-process.js';

const run = promisify(execFile);

const dirs: string[] = [];
const children: ChildProcess[] = [];
afterAll(async () => {
  // A failed assertion leaves its service running: stopped here, not left to eat the next files' CPU.
  for (const c of children.filter((c) => c.exitCode === null && c.signalCode === null)) {
    const exited = new Promise((r) => c.once('exit', r));
    c.kill('SIGINT'); // stops its Temporal dev server too, where a SIGKILL would orphan it
    const t = setTimeout(() => c.kill('SIGKILL'), 15_000);
    await exited;
    clearTimeout(t);
  }
  for (const d of dirs) await rm(d, { recursive: true, force: true });
});

/**
 * `npm start` with nothing configured: embedded PGlite + Temporal dev server + worker + API in
 * one process; the CLI reaches the running service's database; Ctrl-C stops it; a second start
 * finds the store again.
 */
describe('embedded default (npm start)', () => {
  it('starts, serves, stops on SIGINT and keeps its data across restarts', async () => {
    const dataDir = await mkdtemp(join(tmpdir(), 'malipo-embedded-'));
    dirs.push(dataDir);
    const env = await embeddedEnv(dataDir);
    const base = `http://127.0.0.1:${env.PORT}`;

    const start = () => {
      const c = startEmbedded(env);
      children.push(c);
      return c;
    };
    let child = start();
    const banner = await waitForOutput(child, 'Malipo is running.', 240_000);
    expect(banner).toContain(`Temporal UI:  http://127.0.0.1:${env.TEMPORAL_UI_PORT}`);
    expect((await httpCall(base, { method: 'GET', url: '/health' })).body).toEqual({ ok: true, database: true });
    // Temporal's SQLite file runs with a write-ahead log (the header's format bytes read 2, not the rollback journal's 1).
    const header = await readFile(join(dataDir, 'temporal.sqlite'));
    expect([header[18], header[19]]).toEqual([2, 2]);

    const { stdout } = await run(process.execPath, ['bin/malipo.mjs', 'stores:create', '--name', 'Embedded'], { env });
    const store = JSON.parse(stdout);
    expect(store.keys.test.secretKey).toMatch(/^sk_test_/);
    const chainsUrl = `/v1/chains/client/${store.clientId}?pk=${store.keys.test.publishableKey}`;
    expect((await httpCall(base, { method: 'GET', url: chainsUrl })).body.clientName).toBe('Embedded');

    // The Temporal UI is read-only, as the production topology's: its settings hide every write,
    // and a write sent by hand is refused before it reaches the server.
    const ui = `http://127.0.0.1:${env.TEMPORAL_UI_PORT}`;
    const settings = await httpCall(ui, { method: 'GET', url: '/api/v1/settings' });
    expect(settings.status).toBe(200);
    expect(settings.body).toMatchObject({ DisableWriteActions: true, BatchActionsDisabled: true });
    const namespaces = await httpCall(ui, { method: 'GET', url: '/api/v1/namespaces' });
    expect(namespaces.status).toBe(200);
    expect(JSON.stringify(namespaces.body)).toContain('"default"');
    for (const url of ['/api/v1/namespaces/default/workflows/payment-link%2Fpl_x/terminate', '/api/v1/namespaces/default/workflows/payment-link%2Fpl_x/signal/cancel', '/api/v1/namespaces/default/workflows/x/query/y/../../terminate']) {
      const write = await httpCall(ui, { method: 'POST', url, payload: { reason: 'ops' } });
      expect(write.status).toBe(403);
      expect(write.text).toContain('read-only');
    }
    expect((await httpCall(ui, { method: 'GET', url: '/' })).status).toBe(200);

    const exited = new Promise<number | null>((r) => child.once('exit', (code) => r(code)));
    child.kill('SIGINT');
    expect(await exited).toBe(0);

    child = start();
    await waitForOutput(child, 'Malipo is running.', 240_000);
    expect((await httpCall(base, { method: 'GET', url: chainsUrl })).body.clientName).toBe('Embedded');
    const exited2 = new Promise<number | null>((r) => child.once('exit', (code) => r(code)));
    child.kill('SIGINT');
    expect(await exited2).toBe(0);
  }, 600_000);
});
