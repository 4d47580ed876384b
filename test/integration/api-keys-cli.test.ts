import { afterAll, beforeAll, describe, expect, it } from '@jest/globals';
import { spawn } from 'node:child_process';
import type { CreatedStore } from '../../db/store-repo.js';
import { startStack, type Stack } from '../helpers/stack.js';
import { eventually } from '../helpers/wait.js';

/** `npx malipo keys:*` through the real bin, against the test database, checked with the API. */
let stack: Stack;
let store: CreatedStore;
beforeAll(async () => {
  // A short key cache: the CLI is another process, and its changes hold in the API within it.
  stack = await startStack({ API_KEY_CACHE_SECONDS: '1' });
  store = await stack.createStore('CLI keys');
});
afterAll(async () => {
  await stack?.stop();
});

interface Run {
  code: number | null;
  out: any;
  stderr: string;
}

async function malipo(...args: string[]): Promise<Run> {
  const proc = spawn(process.execPath, ['bin/malipo.mjs', ...args], {
    env: { ...process.env, DATABASE_URL: stack.config.databaseUrl!, DATA_DIR: '/nonexistent-malipo-test-dir', LOG_LEVEL: 'silent', NODE_OPTIONS: '' },
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  let stdout = '';
  let stderr = '';
  proc.stdout!.on('data', (c: Buffer) => (stdout += c.toString()));
  proc.stderr!.on('data', (c: Buffer) => (stderr += c.toString()));
  const code = await new Promise<number | null>((resolve) => proc.on('exit', resolve));
  const last = stdout.trim().split('\n').pop();
  return { code, out: last ? JSON.parse(last) : undefined, stderr };
}

const works = async (key: string) => (await stack.request({ method: 'GET', url: '/v1/keys', key })).status;
/** The status once the API refuses the key (a change made by another process holds within seconds). */
const refusedWithin = (key: string) => eventually(async () => ((await works(key)) === 401 ? 401 : undefined), 'the API to refuse the key', 15_000);

describe('npx malipo keys:*', () => {
  it('lists, creates, rolls and revokes, printing JSON like the API answers', async () => {
    const list = await malipo('keys:list', '--client', store.clientId, '--env', 'test');
    expect([list.code, list.stderr]).toEqual([0, '']);
    expect(list.out.data.map((k: any) => [k.kind, k.environment, k.last4])).toEqual(
      expect.arrayContaining([['secret', 'test', store.keys.test.secretKey.slice(-4)], ['publishable', 'test', store.keys.test.publishableKey.slice(-4)]]),
    );
    expect(JSON.stringify(list.out)).not.toContain(store.keys.test.secretKey);

    const created = await malipo('keys:create', '--client', store.clientId, '--env', 'live', '--name', 'deploy bot');
    expect([created.code, created.stderr]).toEqual([0, '']);
    expect(created.out).toMatchObject({ id: expect.stringMatching(/^key_/), kind: 'secret', environment: 'live', name: 'deploy bot', key: expect.stringMatching(/^sk_live_/) });
    expect(await works(created.out.key)).toBe(200);

    const rolled = await malipo('keys:roll', '--client', store.clientId, '--env', 'live', '--key', created.out.id, '--grace-hours', '0');
    expect([rolled.code, rolled.stderr]).toEqual([0, '']);
    expect(rolled.out).toMatchObject({ key: expect.stringMatching(/^sk_live_/), previousKey: { id: created.out.id, status: 'expired' } });
    // The CLI is another process: the API refuses the old key within API_KEY_CACHE_SECONDS (1 s here).
    expect(await refusedWithin(created.out.key)).toBe(401);
    expect(await works(rolled.out.key)).toBe(200);

    const revoked = await malipo('keys:revoke', '--client', store.clientId, '--env', 'live', '--key', rolled.out.id);
    expect([revoked.code, revoked.stderr]).toEqual([0, '']);
    expect(revoked.out).toMatchObject({ id: rolled.out.id, status: 'revoked' });
    expect(await refusedWithin(rolled.out.key)).toBe(401);
  }, 60_000);

  it('creates a key for a store whose every secret key is revoked (the way back in)', async () => {
    const s = await stack.createStore('Locked out');
    const id = (await stack.request({ method: 'GET', url: '/v1/keys', key: s.keys.test.secretKey })).body.data.find((k: any) => k.kind === 'secret').id;
    await stack.request({ method: 'POST', url: `/v1/keys/${id}/revoke`, key: s.keys.test.secretKey, payload: { confirmSelfRevoke: true } });
    expect(await works(s.keys.test.secretKey)).toBe(401);
    const created = await malipo('keys:create', '--client', s.clientId, '--env', 'test');
    expect([created.code, created.stderr]).toEqual([0, '']);
    expect(await works(created.out.key)).toBe(200);
  }, 60_000);

  it('explains a wrong invocation, an unknown store and another store’s key', async () => {
    const other = await stack.createStore('Other CLI store');
    const otherId = (await stack.request({ method: 'GET', url: '/v1/keys', key: other.keys.test.secretKey })).body.data[0].id;
    const noEnv = await malipo('keys:list', '--client', store.clientId);
    expect(noEnv.code).toBe(2);
    expect(noEnv.stderr).toContain('--env test|live');
    const noKey = await malipo('keys:revoke', '--client', store.clientId, '--env', 'test');
    expect(noKey.code).toBe(2);
    expect(noKey.stderr).toContain('--key');
    const unknownStore = await malipo('keys:list', '--client', 'cli_000000000000000000000000', '--env', 'test');
    expect(unknownStore.code).toBe(1);
    expect(unknownStore.stderr).toContain('No such store');
    const foreign = await malipo('keys:revoke', '--client', store.clientId, '--env', 'test', '--key', otherId);
    expect(foreign.code).toBe(1);
    expect(JSON.parse(foreign.stderr.trim()).error).toMatchObject({ type: 'not_found_error', code: 'not_found' });
    expect(await works(other.keys.test.secretKey)).toBe(200);
  }, 60_000);
});

describe('npx malipo stores:create --owner-email', () => {
  it('creates the store with its dashboard owner, whose printed password signs in; an existing person just becomes owner', async () => {
    const made = await malipo('stores:create', '--name', 'CLI Owned Shop', '--owner-email', 'Ops@Example.test');
    expect([made.code, made.stderr]).toEqual([0, '']);
    expect(made.out).toMatchObject({ clientId: expect.stringMatching(/^cli_/), owner: { email: 'ops@example.test', password: expect.stringMatching(/^[A-Za-z0-9]{20}$/) } });
    const signIn = (email: string, password: string) => stack.request({
      method: 'POST', url: '/dashboard/login', payload: new URLSearchParams({ email, password }).toString(),
      headers: { 'content-type': 'application/x-www-form-urlencoded', origin: stack.baseUrl },
    });
    const res = await signIn('ops@example.test', made.out.owner.password);
    expect([res.status, res.headers.location]).toEqual([303, '/dashboard']);

    const second = await malipo('stores:create', '--name', 'CLI Second Shop', '--owner-email', 'ops@example.test');
    expect([second.code, second.stderr]).toEqual([0, '']);
    expect(second.out.owner).toEqual({ email: 'ops@example.test' });

    const bad = await malipo('stores:create', '--name', 'Never Made', '--owner-email', 'not-an-email');
    expect(bad.code).toBe(2);
    expect(bad.stderr).toContain('not an email address');
  });
});
