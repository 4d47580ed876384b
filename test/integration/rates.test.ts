import { afterAll, beforeAll, describe, expect, it } from '@jest/globals';
import { createServer, type Server } from 'node:http';
import { RateService, type RateSource } from '../../activities/rates/rate-service.js';
import { AppError } from '../../domain/errors.js';

/** Two local price sources whose answers the test controls: the failover path runs for real over HTTP. */
let servers: Server[] = [];
const answers: Record<string, { status: number; body: string }> = {};

function source(name: string, port: number, extract: RateSource['extract']): RateSource {
  return { name, url: `http://127.0.0.1:${port}/${name}`, extract };
}

beforeAll(async () => {
  servers = await Promise.all(
    ['primary', 'secondary'].map(
      (name) =>
        new Promise<Server>((resolve) => {
          const s = createServer((req, res) => {
            const a = answers[name] ?? { status: 500, body: '{}' };
            res.writeHead(a.status, { 'content-type': 'application/json' }).end(a.body);
          });
          s.listen(0, '127.0.0.1', () => resolve(s));
        }),
    ),
  );
});
afterAll(() => servers.forEach((s) => s.close()));

const port = (i: number) => (servers[i]!.address() as { port: number }).port;

describe('RateService', () => {
  it('uses the fixed rate for test keys without calling anything', async () => {
    const rates = new RateService({ testKesPerUsdt: '130', sources: [] });
    expect((await rates.kesPerUsdt('test')).kesPerUsdt).toBe('130');
  });

  it('fails over to the next source, then serves a cached rate up to ten minutes old, then refuses', async () => {
    let now = 1_000_000;
    const rates = new RateService({
      testKesPerUsdt: '130',
      now: () => now,
      sources: [
        source('primary', port(0), (b: any) => b?.tether?.kes),
        source('secondary', port(1), (b: any) => b?.data?.rates?.KES),
      ],
    });
    answers.primary = { status: 503, body: '{}' };
    answers.secondary = { status: 200, body: '{"data":{"rates":{"KES":"129.45"}}}' };
    expect(await rates.kesPerUsdt('live')).toMatchObject({ kesPerUsdt: '129.45', source: 'secondary' });

    answers.primary = { status: 200, body: '{"tether":{"kes":129.8}}' };
    now += 61_000; // past the one-minute freshness: read again, primary first
    expect(await rates.kesPerUsdt('live')).toMatchObject({ kesPerUsdt: '129.8', source: 'primary' });

    answers.primary = { status: 500, body: '' };
    answers.secondary = { status: 200, body: '{"data":{"rates":{}}}' };
    now += 5 * 60_000;
    expect(await rates.kesPerUsdt('live')).toMatchObject({ kesPerUsdt: '129.8', source: 'primary' });
    now += 6 * 60_000; // the last good rate is now older than ten minutes
    await expect(rates.kesPerUsdt('live')).rejects.toMatchObject({ status: 503, code: 'upstream_unavailable' });
    await expect(rates.kesPerUsdt('live')).rejects.toBeInstanceOf(AppError);
  });
});
