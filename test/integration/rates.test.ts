import { afterAll, beforeAll, describe, expect, it } from '@jest/globals';
import { createServer, type Server } from 'node:http';
import { pgRateReference, RateService, urlSource, type RateSource } from '../../services/rates/rate-service.js';
import { openPool, type DatabasePool } from '../../db/pool.js';
import { AppError } from '../../domain/errors.js';
import { createTestDatabase } from '../helpers/database.js';
import { connectAllRails } from '../helpers/fixtures.js';
import { startStack, type Stack } from '../helpers/stack.js';

/**
 * Local price sources whose answers the test controls: every check of a live rate runs for real
 * over HTTP. Each source answers at /<name> with what `answers[name]` says (500 if nothing).
 */
const names = ['alpha', 'beta', 'gamma'] as const;
type Name = (typeof names)[number];
let servers: Server[] = [];
const answers: Partial<Record<Name, { status: number; body: string }>> = {};
const hits: Record<string, number> = {};

beforeAll(async () => {
  servers = await Promise.all(
    names.map(
      (name) =>
        new Promise<Server>((resolve) => {
          const s = createServer((req, res) => {
            hits[name] = (hits[name] ?? 0) + 1;
            const a = answers[name] ?? { status: 500, body: '{}' };
            res.writeHead(a.status, { 'content-type': 'application/json' }).end(a.body);
          });
          s.listen(0, '127.0.0.1', () => resolve(s));
        }),
    ),
  );
});
afterAll(() => servers.forEach((s) => s.close()));

const urlOf = (name: Name) => `http://127.0.0.1:${(servers[names.indexOf(name)]!.address() as { port: number }).port}/${name}`;
const source = (name: Name): RateSource => ({ ...urlSource(name, urlOf(name)), name });

/** Sets what each source says: a number is a good answer, null a 503, a string a raw body. */
function say(values: Partial<Record<Name, number | string | null>>) {
  for (const name of names) {
    const v = values[name];
    if (v === undefined || v === null) answers[name] = { status: 503, body: '{}' };
    else answers[name] = { status: 200, body: typeof v === 'string' ? v : JSON.stringify({ kesPerUsdt: v }) };
  }
}

function service(sources: Name[], clock: { now: number }, extra: Partial<ConstructorParameters<typeof RateService>[0]> = {}) {
  return new RateService({ testKesPerUsdt: '130', now: () => clock.now, sources: sources.map(source), ...extra });
}

const refusal = (fragment: string) => expect.objectContaining({ status: 503, code: 'rate_unavailable', type: 'upstream_error', message: expect.stringContaining(fragment) });

describe('RateService', () => {
  it('uses the fixed rate for test keys without calling anything', async () => {
    const before = { ...hits };
    const rates = new RateService({ testKesPerUsdt: '130', sources: names.map(source) });
    expect((await rates.kesPerUsdt('test')).kesPerUsdt).toBe('130');
    expect(hits).toEqual(before);
  });

  it('accepts the median of sources that agree within 2%', async () => {
    say({ alpha: 129.5, beta: '{"tether":{"kes":130.1}}' });
    const rates = service(['alpha', 'beta'], { now: 1_000_000 });
    expect(await rates.kesPerUsdt('live')).toMatchObject({ kesPerUsdt: '129.8', source: 'alpha+beta' });
  });

  it('outvotes one lying source when the others agree', async () => {
    say({ alpha: 171.3, beta: 129.5, gamma: 129.9 });
    const rates = service(['alpha', 'beta', 'gamma'], { now: 1_000_000 });
    expect(await rates.kesPerUsdt('live')).toMatchObject({ kesPerUsdt: '129.7', source: 'beta+gamma' });
  });

  it('refuses when the sources disagree', async () => {
    say({ alpha: 129, beta: 140 });
    const rates = service(['alpha', 'beta'], { now: 1_000_000 });
    const err = await rates.kesPerUsdt('live').catch((e: unknown) => e);
    expect(err).toBeInstanceOf(AppError);
    expect(err).toEqual(refusal('disagree by more than 2%'));
    expect((err as AppError).message).toMatch(/alpha 129.*beta 140/);
  });

  it('refuses a tie between two camps', async () => {
    say({ alpha: 129, beta: 140, gamma: 129.2 });
    const rates = service(['alpha', 'beta', 'gamma'], { now: 1_000_000 }, { sources: [source('alpha'), source('beta'), source('gamma'), { ...source('beta'), name: 'delta' }] });
    await expect(rates.kesPerUsdt('live')).rejects.toEqual(refusal('disagree'));
  });

  it('refuses a rate only one source gives', async () => {
    say({ alpha: 129.5, beta: null });
    await expect(service(['alpha', 'beta'], { now: 1_000_000 }).kesPerUsdt('live')).rejects.toEqual(refusal('only one rate source (alpha)'));
    await expect(service(['alpha'], { now: 1_000_000 }).kesPerUsdt('live')).rejects.toEqual(refusal('only one rate source (alpha)'));
  });

  it('refuses an absurd value even when the sources agree on it, and says which band is accepted', async () => {
    say({ alpha: 1, beta: 1 });
    await expect(service(['alpha', 'beta'], { now: 1_000_000 }).kesPerUsdt('live')).rejects.toEqual(refusal('alpha said 1, outside the accepted 50–500 KES per USDT'));
    say({ alpha: 1290, beta: 1290 });
    await expect(service(['alpha', 'beta'], { now: 1_000_000 }).kesPerUsdt('live')).rejects.toEqual(refusal('outside the accepted 50–500'));
    say({ alpha: 1290, beta: 1290 });
    const wider = service(['alpha', 'beta'], { now: 1_000_000 }, { policy: { maxKesPerUsdt: 2000 } });
    expect(await wider.kesPerUsdt('live')).toMatchObject({ kesPerUsdt: '1290' });
  });

  it('refuses a jump of more than 10% from the last good rate within an hour, even while that rate is recent', async () => {
    const clock = { now: 1_000_000 };
    const rates = service(['alpha', 'beta'], clock);
    say({ alpha: 130, beta: 130.4 });
    expect(await rates.kesPerUsdt('live')).toMatchObject({ kesPerUsdt: '130.2' });
    say({ alpha: 150, beta: 150.2 });
    clock.now += 2 * 60_000;
    await expect(rates.kesPerUsdt('live')).rejects.toEqual(refusal('moved 15.3% (to 150.1) from the last good rate 130.2 of 2 min ago'));
    say({ alpha: 139, beta: 139.4 }); // 6.9%: a move, not a jump
    expect(await rates.kesPerUsdt('live')).toMatchObject({ kesPerUsdt: '139.2' });
    say({ alpha: 160, beta: 160 });
    clock.now += 5 * 60_000;
    await expect(rates.kesPerUsdt('live')).rejects.toEqual(refusal('moved 14.9%'));
    clock.now += 61 * 60_000; // the last good rate no longer bounds the next one
    expect(await rates.kesPerUsdt('live')).toMatchObject({ kesPerUsdt: '160' });
  });

  it('serves the last good rate for ten minutes when no trustworthy one can be read, then refuses', async () => {
    const clock = { now: 1_000_000 };
    const rates = service(['alpha', 'beta'], clock);
    say({ alpha: 129.8, beta: 129.8 });
    expect(await rates.kesPerUsdt('live')).toMatchObject({ kesPerUsdt: '129.8' });
    say({ alpha: null, beta: '{"data":{"rates":{}}}' });
    clock.now += 5 * 60_000;
    expect(await rates.kesPerUsdt('live')).toMatchObject({ kesPerUsdt: '129.8', source: 'alpha+beta' });
    clock.now += 6 * 60_000;
    await expect(rates.kesPerUsdt('live')).rejects.toEqual(refusal('no rate source gave a usable rate (alpha: HTTP 503; beta: no usable KES rate in the answer)'));
  });
});

describe('the last good rate in PostgreSQL', () => {
  let db: { url: string; drop: () => Promise<void> };
  let pool: DatabasePool;
  beforeAll(async () => {
    db = await createTestDatabase();
    pool = await openPool(db.url, 2);
  });
  afterAll(async () => {
    await pool?.end();
    await db?.drop();
  });

  it('bounds the next rate of every API process, also after a restart', async () => {
    const clock = { now: Date.now() };
    say({ alpha: 130, beta: 130 });
    const first = service(['alpha', 'beta'], clock, { reference: pgRateReference(pool) });
    expect(await first.kesPerUsdt('live')).toMatchObject({ kesPerUsdt: '130' });
    // Another process (or this one restarted): nothing in memory, the reference is in the database.
    say({ alpha: 200, beta: 200 });
    clock.now += 2 * 60_000;
    const second = service(['alpha', 'beta'], clock, { reference: pgRateReference(pool) });
    await expect(second.kesPerUsdt('live')).rejects.toEqual(refusal('from the last good rate 130 of 2 min ago'));
    say({ alpha: null, beta: null });
    expect(await second.kesPerUsdt('live')).toMatchObject({ kesPerUsdt: '130', source: 'alpha+beta' });
  });
});

describe('POST /v1/payment-links with a live key', () => {
  let stack: Stack;
  let liveKey: string;
  beforeAll(async () => {
    stack = await startStack({ RATE_SOURCES: `${urlOf('alpha')},${urlOf('beta')}` });
    const store = await stack.createStore('Live rates');
    await connectAllRails(stack, store.clientId, 'live');
    liveKey = store.keys.live.secretKey;
  });
  afterAll(async () => {
    await stack?.stop();
  });

  const create = (payload: unknown) => stack.request({ method: 'POST', url: '/v1/payment-links', key: liveKey, payload });

  it('tells the merchant why no KES amount can be computed (503 rate_unavailable), and creates the link once the sources agree', async () => {
    say({ alpha: 1, beta: 129 });
    const refused = await create({ usdtAmount: '100', enabledRails: ['MOBILE_MONEY'] });
    expect(refused.status).toBe(503);
    expect(refused.body.error).toMatchObject({ type: 'upstream_error', code: 'rate_unavailable' });
    expect(refused.body.error.message).toContain('outside the accepted 50–500 KES per USDT');
    expect(refused.body.error.message).toContain('send both usdtAmount and mobileMoneyAmount');

    // Both amounts given: nothing to convert, so the link is made without a rate.
    const both = await create({ usdtAmount: '100', mobileMoneyAmount: 12900, enabledRails: ['MOBILE_MONEY'] });
    expect([both.status, both.body.mobileMoneyAmount, both.body.kesPerUsdt]).toEqual([201, 12900, null]);

    say({ alpha: 129.2, beta: '{"data":{"rates":{"KES":"129.6"}}}' });
    const created = await create({ usdtAmount: '100', enabledRails: ['MOBILE_MONEY'] });
    expect([created.status, created.body.kesPerUsdt, created.body.mobileMoneyAmount]).toEqual([201, '129.4', 12940]);
  }, 60_000);
});
