import { afterAll, afterEach, beforeAll, describe, expect, it } from '@jest/globals';
import type { FastifyInstance } from 'fastify';
import type { AddressInfo } from 'node:net';
import { RateService } from '../../services/rates/rate-service.js';
import { buildApp } from '../../runtime/http-app.js';
import { memoryRateLimitStore } from '../../api/plugins/rate-limit.js';
import { loadConfig } from '../../config/config.js';
import { httpCall, type HttpResponse } from '../helpers/http.js';
import { startStack, type Stack } from '../helpers/stack.js';

/**
 * Issue 12, item 6: behind a load balancer every request comes from the balancer's address. With
 * TRUST_PROXY naming it, each client behind it has its own per-IP budgets;
 * without it, or from a peer it does not name, X-Forwarded-For is ignored. Real HTTP to a
 * listening app: what Fastify does with the socket and the header, not an injected address.
 */
let stack: Stack;
const apps: FastifyInstance[] = [];

beforeAll(async () => {
  stack = await startStack();
});
afterEach(async () => {
  await Promise.all(apps.splice(0).map((a) => a.close()));
});
afterAll(async () => stack?.stop());

/** A fresh app (its own rate-limit counts) listening on a real port, with TRUST_PROXY as given. */
async function appWith(trustProxy: string | undefined): Promise<string> {
  const env = { DATABASE_URL: stack.config.databaseUrl!, TEMPORAL_ADDRESS: stack.config.temporal.address!, ...(trustProxy === undefined ? {} : { TRUST_PROXY: trustProxy }) };
  const config = { ...stack.config, trustProxy: loadConfig(env).trustProxy };
  const rates = new RateService({ testKesPerUsdt: config.testKesPerUsdt, sources: [] });
  const app = await buildApp({ config, pool: stack.pool, temporal: stack.temporal, rateLimitStore: memoryRateLimitStore(), rates });
  apps.push(app);
  await app.listen({ host: '127.0.0.1', port: 0 });
  return `http://127.0.0.1:${(app.server.address() as AddressInfo).port}`;
}

/** Limits count in fixed minutes: start a test early in one so no count resets half-way. */
async function freshWindow(): Promise<void> {
  const into = Date.now() % 60_000;
  if (into > 45_000) await new Promise((r) => setTimeout(r, 60_000 - into + 50));
}

const unknownLink = `pl_${'0'.repeat(24)}`;
type From = { forwardedFor?: string; localAddress?: string };
const headersOf = (from: From): Record<string, string> => (from.forwardedFor ? { 'x-forwarded-for': from.forwardedFor } : {});

/** The checkout's "send M-Pesa prompt" (10 per minute per IP): the status only. */
async function prompt(base: string, from: From): Promise<number> {
  const res = await httpCall(base, {
    method: 'POST',
    url: `/v1/checkout/${unknownLink}/pay/mobile-money`,
    payload: { phoneNumber: '254712345678' },
    headers: headersOf(from),
    localAddress: from.localAddress,
  });
  return res.status;
}

/** What is left of a budget after one request. */
const remaining = (res: HttpResponse) => Number(res.headers['ratelimit-remaining']);
/**
 * A sign-in attempt, each for another email so that only the per-IP limit (20 a minute) counts.
 * Without an Origin it is refused (403) once past the limits, which are checked first: 429 when
 * the client's budget is spent.
 */
let attempts = 0;
const signIn = async (base: string, from: From): Promise<number> =>
  (await httpCall(base, {
    method: 'POST',
    url: '/dashboard/login',
    payload: `email=client-${attempts++}%40example.test&password=`,
    headers: { 'content-type': 'application/x-www-form-urlencoded', ...headersOf(from) },
    localAddress: from.localAddress,
  })).status;
const chains = (base: string, from: From) => httpCall(base, { method: 'GET', url: '/v1/chains', headers: headersOf(from), localAddress: from.localAddress });

/** Uses up one client's 20 sign-in attempts; the 21st is refused. */
async function exhaustSignIns(base: string, from: From): Promise<void> {
  for (let i = 0; i < 20; i++) expect(await signIn(base, from)).toBe(403);
  expect(await signIn(base, from)).toBe(429);
}

/** Uses up one client's 10 prompts; the 11th is refused. */
async function exhaustPrompts(base: string, from: From): Promise<void> {
  for (let i = 0; i < 10; i++) expect(await prompt(base, from)).toBe(404);
  expect(await prompt(base, from)).toBe(429);
}

describe('TRUST_PROXY', () => {
  it('naming the proxy gives two clients behind it separate budgets (checkout prompt, sign-in, chains); unset, the header is ignored', async () => {
    const behindProxy = await appWith('127.0.0.1');
    const unset = await appWith(undefined);
    await freshWindow();
    const alice = { forwardedFor: '203.0.113.1' };
    const bob = { forwardedFor: '203.0.113.2' };
    for (const [base, bobsFirstPrompt, bobsFirstSignIn] of [[behindProxy, 404, 403], [unset, 429, 429]] as const) {
      await exhaustPrompts(base, alice);
      expect({ base, status: await prompt(base, bob) }).toEqual({ base, status: bobsFirstPrompt });
      await exhaustSignIns(base, alice);
      expect({ base, status: await signIn(base, bob) }).toEqual({ base, status: bobsFirstSignIn });
    }
    expect(remaining(await chains(behindProxy, alice))).toBe(119);
    expect(remaining(await chains(behindProxy, bob))).toBe(119);
    expect(remaining(await chains(unset, alice))).toBe(119);
    expect(remaining(await chains(unset, bob))).toBe(118);
  });

  it('believes the header only from the peer it names: another peer keeps its own address, whatever it claims', async () => {
    const base = await appWith('127.0.0.1');
    await freshWindow();
    // 127.0.0.2 talks to the app directly and claims to be whoever it likes.
    const direct = (forwardedFor: string) => ({ forwardedFor, localAddress: '127.0.0.2' });
    await exhaustSignIns(base, direct('203.0.113.1'));
    expect(await signIn(base, direct('203.0.113.2'))).toBe(429);
    // Through the named proxy, the same two claims are two clients.
    await exhaustSignIns(base, { forwardedFor: '203.0.113.1' });
    expect(await signIn(base, { forwardedFor: '203.0.113.2' })).toBe(403);
    await exhaustPrompts(base, direct('203.0.113.3'));
    expect(await prompt(base, direct('203.0.113.4'))).toBe(429);
    expect(await prompt(base, { forwardedFor: '203.0.113.4' })).toBe(404);
  });

  it('through a chain of listed proxies takes the address before them, not one the client wrote earlier', async () => {
    // The load balancer (127.0.0.1) is behind a CDN whose edges are 10.0.0.0/8: both are listed.
    const base = await appWith('127.0.0.1, 10.0.0.0/8');
    await freshWindow();
    await exhaustSignIns(base, { forwardedFor: '198.51.100.9, 203.0.113.1, 10.1.2.3' });
    expect(await signIn(base, { forwardedFor: '198.51.100.10, 203.0.113.1, 10.9.9.9' })).toBe(429);
    expect(await signIn(base, { forwardedFor: '198.51.100.9, 203.0.113.2, 10.1.2.3' })).toBe(403);
  });
});
