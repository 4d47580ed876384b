import { afterAll, beforeAll, describe, expect, it } from '@jest/globals';
import { createServer, connect, type Server, type Socket } from 'node:net';
import type { AddressInfo } from 'node:net';
import type { FastifyInstance } from 'fastify';
import { buildApp } from '../../runtime/http-app.js';
import { memoryRateLimitStore } from '../../api/plugins/rate-limit.js';
import { rateServiceFor } from '../../services/rates/rate-service.js';
import { openPool, type DatabasePool } from '../../db/pool.js';
import type { CreatedStore } from '../../db/store-repo.js';
import { startStack, type Stack } from '../helpers/stack.js';
import { eventually } from '../helpers/wait.js';

/**
 * PostgreSQL going away under a running API (a restart, a failover, a cut network): requests get
 * a 503 `upstream_unavailable` with Retry-After, which clients retry, never a 500 `internal`; and
 * the API serves again by itself when the database is back. Found by the chaos suite
 * (test/chaos/cluster-faults.test.ts counted 66 such 500s while it killed PostgreSQL).
 */
let stack: Stack;
let store: CreatedStore;
let pool: DatabasePool;
let app: FastifyInstance;
let base: string;
let proxy: { port: number; server: Server; sockets: Set<Socket> };

/** A TCP pass-through to PostgreSQL that can be cut (every connection dropped, new ones refused) and restored. */
async function startProxy(target: { host: string; port: number }, port = 0) {
  const sockets = new Set<Socket>();
  const server = createServer((client) => {
    const upstream = connect(target.port, target.host);
    for (const s of [client, upstream]) {
      sockets.add(s);
      s.on('close', () => sockets.delete(s));
      s.on('error', () => undefined);
    }
    client.pipe(upstream).pipe(client);
  });
  await new Promise<void>((resolve) => server.listen(port, '127.0.0.1', resolve));
  return { port: (server.address() as AddressInfo).port, server, sockets };
}

async function cut(): Promise<void> {
  for (const s of proxy.sockets) s.destroy();
  await new Promise((resolve) => proxy.server.close(resolve));
}

beforeAll(async () => {
  stack = await startStack();
  store = await stack.createStore('Outage');
  const url = new URL(stack.config.databaseUrl!);
  proxy = await startProxy({ host: url.hostname, port: Number(url.port || 5432) });
  url.port = String(proxy.port);
  pool = await openPool(url.toString(), 3);
  app = await buildApp({ config: stack.config, pool, temporal: stack.temporal, rateLimitStore: memoryRateLimitStore(), rates: rateServiceFor(stack.config, pool) });
  await app.listen({ host: '127.0.0.1', port: 0 });
  base = `http://127.0.0.1:${(app.server.address() as AddressInfo).port}`;
});
afterAll(async () => {
  await app?.close();
  await pool?.end().catch(() => undefined);
  proxy?.server.close();
  await stack?.stop();
});

const listLinks = () => fetch(`${base}/v1/payment-links`, { headers: { 'x-api-key': store.keys.test.secretKey } });

describe('the database going away under the API', () => {
  it('is a 503 upstream_unavailable with Retry-After, then serves again once it is back', async () => {
    expect((await listLinks()).status).toBe(200);
    await cut();
    const res = await listLinks();
    const body = (await res.json()) as { error: { type: string; code: string; requestId: string } };
    expect([res.status, body.error.type, body.error.code]).toEqual([503, 'upstream_error', 'upstream_unavailable']);
    expect(res.headers.get('retry-after')).toBe('5');
    expect(body.error.requestId).toMatch(/\S/);

    proxy = await startProxy({ host: new URL(stack.config.databaseUrl!).hostname, port: Number(new URL(stack.config.databaseUrl!).port || 5432) }, proxy.port);
    await eventually(async () => ((await listLinks()).status === 200 ? true : undefined), 'the API to serve again');
  });
});
