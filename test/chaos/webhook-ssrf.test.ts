import { afterAll, beforeAll, describe, expect, it } from '@jest/globals';
import type { CreatedStore } from '../../db/store-repo.js';
import { TestDnsServer } from '../helpers/webhook-dns.js';
import { encryptionEnv, eventually, loopbackWebhooks, webhookHarness, suiteDispatches } from '../helpers/webhook-harness.js';
import { WebhookReceiver } from '../helpers/webhook-receiver.js';
import { registerSecrets, writeReport } from './harness/report.js';
import { countTemporalWrites, errorBodyProblem, send, startHostileStack, TableFingerprint, type HostileStack } from './hostile/common.js';

/**
 * Webhook URLs aimed inside the network. Live endpoints: every internal address, however it is
 * spelled (decimal, octal, hex, IPv4-mapped IPv6, a DNS name that resolves inside), is refused at
 * creation with a 400 naming `url`, writing nothing; a name that resolved to a public address at
 * creation and inside later is never dialled (the receiver counts TCP connections). Redirects to
 * internal addresses are never followed. The operator allows loopback for test-mode endpoints
 * only, as a development setup does, so the receiver can answer with redirects.
 */
const scenario = 'webhook-ssrf';
const publicIp = '93.184.216.34';

let h: HostileStack;
let dns: TestDnsServer;
let receiver: WebhookReceiver;
/** Where the rebinding name points once it turns internal: no other endpoint uses it, so any connection is a dial. */
let target: WebhookReceiver;
let store: CreatedStore;
let fp: TableFingerprint;
let temporalWrites: { readonly count: number };
const env = encryptionEnv();
const secrets: Array<{ kind: string; value: string }> = [{ kind: 'ENCRYPTION_KEY', value: env.ENCRYPTION_KEY }];
const counts = { fuzzedInputs: 0, http5xx: 0, partialWrites: 0, refused: 0, dialled: 0 };
const problems: string[] = [];

beforeAll(async () => {
  dns = await TestDnsServer.start();
  receiver = await WebhookReceiver.start();
  target = await WebhookReceiver.start();
  h = await startHostileStack(scenario, { WEBHOOK_RETRY_SCALE: '0.00002', WEBHOOK_DNS_SERVERS: dns.server, ...loopbackWebhooks, ...suiteDispatches, ...env });
  store = await h.stack.createStore('SSRF');
  secrets.push({ kind: 'secret API key', value: store.keys.test.secretKey }, { kind: 'secret API key', value: store.keys.live.secretKey });
  fp = await TableFingerprint.open(h.stack.config.databaseUrl!);
  temporalWrites = countTemporalWrites(h.stack.temporal);
}, 120_000);

afterAll(async () => {
  await fp?.close();
  if (h) {
    await registerSecrets(scenario, secrets);
    await writeReport(scenario, {
      fuzzedInputs: counts.fuzzedInputs, http5xx: counts.http5xx, partialWrites: counts.partialWrites,
      notes: [`${counts.refused} internal webhook URLs refused at creation; ${counts.dialled} connections reached the receiver from refused destinations`, ...problems],
    });
    await h.finish();
  }
  await receiver?.down();
  await target?.down();
  await dns?.close();
});

const { emit, deliveries } = webhookHarness(() => ({ stack: h.stack, receiver }));

/** Creates an endpoint; a refusal must be the documented 400 naming `url` and write nothing. */
async function create(env: 'test' | 'live', url: string) {
  const before = await fp.take();
  const writes = temporalWrites.count;
  const res = await send(h.stack.baseUrl, {
    method: 'POST', path: '/v1/webhook-endpoints', body: JSON.stringify({ url }),
    headers: { 'x-api-key': store.keys[env].secretKey, 'content-type': 'application/json' },
  });
  counts.fuzzedInputs++;
  if (res.status >= 500) counts.http5xx++;
  if (res.status >= 400) {
    const changed = TableFingerprint.changed(before, await fp.take());
    if (changed.length > 0 || temporalWrites.count !== writes) {
      counts.partialWrites++;
      problems.push(`${url}: refused but changed ${changed.join(', ')}`);
    }
  } else if (res.status === 201) {
    secrets.push({ kind: 'webhook secret', value: (res.json as { secret: string }).secret });
  }
  return res;
}

async function expectRefused(env: 'test' | 'live', url: string): Promise<void> {
  const res = await create(env, url);
  const error = (res.json as { error?: { param?: string; message?: string } } | undefined)?.error;
  expect({ env, url, status: res.status, param: error?.param, problem: errorBodyProblem(res) }).toEqual({ env, url, status: 400, param: 'url', problem: null });
  expect(error?.message).toMatch(/^Invalid 'url': it /);
  counts.refused++;
}

/** Every spelling of an internal address we know of (`:P` is replaced by the receiver's port). */
const internal = [
  'http://127.0.0.1:P/', 'https://127.0.0.1:P/', 'https://127.1:P/', 'https://127.0.1:P/', 'https://127.255.255.254/', 'https://localhost:P/', 'https://LOCALHOST./',
  'https://foo.localhost/', 'https://[::1]:P/', 'https://[0:0:0:0:0:0:0:1]/', 'https://[::]/', 'https://0.0.0.0:P/', 'https://0/', 'https://0.0.0.0./',
  'https://10.0.0.1/', 'https://10.255.255.255/', 'https://172.16.0.1/', 'https://172.31.255.254/', 'https://192.168.0.1/', 'https://192.168.255.255/',
  'https://169.254.169.254/latest/meta-data/', 'https://169.254.0.1/', 'https://100.64.0.1/', 'https://198.18.0.1/', 'https://224.0.0.1/', 'https://255.255.255.255/',
  'https://[::ffff:127.0.0.1]/', 'https://[::ffff:7f00:1]/', 'https://[0:0:0:0:0:ffff:127.0.0.1]/', 'https://[::ffff:169.254.169.254]/', 'https://[::ffff:a9fe:a9fe]/',
  'https://[::ffff:10.0.0.1]/', 'https://[::127.0.0.1]/', 'https://[64:ff9b::127.0.0.1]/', 'https://[fe80::1]/', 'https://[fd00::1]/', 'https://[fc00::1]/', 'https://[ff02::1]/',
  // Decimal, octal and hex spellings (the URL parser turns them into dotted quads; they must land in the same checks).
  'https://2130706433/', 'https://0x7f000001/', 'https://017700000001/', 'https://0177.0.0.1/', 'https://0x7f.0.0.1/', 'https://0x7f.1/', 'https://127.000.000.001/',
  'https://2852039166/', 'https://0xa9fea9fe/', 'https://0251.0376.0251.0376/', 'https://167772161/', 'https://0xc0.0xa8.0.1/', 'https://3232235521/',
  // Userinfo and fragment tricks: the host is what the URL parser says it is.
  `https://${publicIp}@127.0.0.1:P/`, `https://user:pass@169.254.169.254/`, `https://127.0.0.1:P#@${publicIp}/`, `https://127.0.0.1:P\\@${publicIp}/`,
  'https://127.0.0.1%2F@example.com/', 'https://①②⑦.⓪.⓪.①/', 'https://１２７.０.０.１/',
  // Not web URLs at all.
  'file:///etc/passwd', 'gopher://127.0.0.1:P/_GET', 'ftp://127.0.0.1/', 'dict://127.0.0.1:P/', 'ldap://127.0.0.1/', 'javascript:alert(1)', 'data:text/plain,x',
  `http://${publicIp}/`, '//127.0.0.1/', 'https:///', 'https://', '',
];

/** DNS names and what the test's resolver answers for them. */
const dnsNames: Record<string, string | string[]> = {
  'private.ssrf.test': '10.0.0.5',
  'loop.ssrf.test': '127.0.0.1',
  'meta.ssrf.test': '169.254.169.254',
  'v6loop.ssrf.test': '::1',
  'mapped.ssrf.test': '::ffff:127.0.0.1',
  'mixed.ssrf.test': [publicIp, '127.0.0.1'],
  'mixed6.ssrf.test': [publicIp, 'fd00::2'],
  'cgnat.ssrf.test': '100.64.1.1',
  'zero.ssrf.test': '0.0.0.0',
};

describe('live webhook endpoints aimed inside', () => {
  it('are refused at creation with a 400 naming url, however the address is spelled, and nothing is written', async () => {
    for (const [name, answer] of Object.entries(dnsNames)) dns.records.set(name, answer);
    const urls = [
      ...internal.map((u) => u.replace(':P', `:${receiver.port}`)),
      ...Object.keys(dnsNames).flatMap((n) => [`https://${n}/hook`, `https://${n.toUpperCase()}./hook`]),
      'https://nxdomain.ssrf.test/hook',
    ];
    for (const url of urls) await expectRefused('live', url);
    expect(receiver.connections + target.connections).toBe(0);
    const list = await h.stack.request({ method: 'GET', url: '/v1/webhook-endpoints', key: store.keys.live.secretKey });
    expect(list.body.data).toEqual([]);
  });

});

describe('test webhook endpoints (loopback allowed by the operator)', () => {
  it('still refuse link-local, private and unspecified addresses, however spelled', async () => {
    for (const url of [
      'http://169.254.169.254/', 'http://2852039166/', 'http://0xa9fea9fe/', 'http://0251.0376.0251.0376/', 'http://[::ffff:169.254.169.254]/',
      'http://10.0.0.1/', 'http://167772161/', 'http://192.168.0.1/', 'http://0.0.0.0:1/', 'http://[::]/', 'http://[fe80::1]/', 'http://meta.ssrf.test/',
      'http://private.ssrf.test/', 'file:///etc/passwd', 'gopher://127.0.0.1/',
    ]) {
      await expectRefused('test', url);
    }
  });

  it('never follow a redirect, to an internal address or anywhere else', async () => {
    let followed = 0;
    receiver.on('/followed', () => {
      followed++;
      return { status: 200 };
    });
    const targets = ['http://169.254.169.254/latest/meta-data/iam', 'http://10.0.0.1/', `http://127.0.0.1:${receiver.port}/followed`, 'http://2130706433/', '/followed', 'file:///etc/passwd'];
    const statuses = [301, 302, 303, 307, 308];
    let n = 0;
    receiver.on('/redirect', () => ({ status: statuses[n % statuses.length]!, headers: { location: targets[n++ % targets.length]! } }));
    const created = await create('test', receiver.url('/redirect'));
    expect(created.status).toBe(201);
    const id = (created.json as { id: string }).id;
    const { event } = await emit(store, { env: 'test' });
    const [first] = await eventually(() => deliveries(store, id), (d) => d.length >= 1, 'the first delivery attempt');
    expect(first).toMatchObject({ eventId: event.id, status: 'failed', responseBody: null });
    for (let i = 0; i < targets.length * 2; i++) {
      const retry = await h.stack.request({ method: 'POST', url: `/v1/webhook-endpoints/${id}/deliveries/${first!.id}/retry`, key: store.keys.test.secretKey });
      counts.fuzzedInputs++;
      expect(retry.status).toBe(200);
      expect(retry.body).toMatchObject({ status: 'failed', responseBody: null });
      expect(retry.body.error).toMatch(/redirect not followed/);
    }
    const text = (await h.stack.request({ method: 'GET', url: `/v1/webhook-endpoints/${id}/deliveries`, key: store.keys.test.secretKey })).text;
    expect(text).not.toContain('169.254.169.254');
    expect(followed).toBe(0);
    expect(receiver.requestsTo('/followed')).toEqual([]);
  });
});

// After every refusal above: from here on, delivery workflows run in the background.
describe('live webhook endpoints whose name turns internal', () => {
  it('a name public at creation and internal at delivery is never dialled, at any attempt and for any answer', async () => {
    dns.records.set('rebind.ssrf.test', publicIp);
    const created = await create('live', `https://rebind.ssrf.test:${target.port}/rebind`);
    expect(created.status).toBe(201);
    const id = (created.json as { id: string }).id;
    expect(target.connections).toBe(0);
    const answers: Array<string | string[]> = ['127.0.0.1', ['127.0.0.1', publicIp], '::ffff:127.0.0.1', '10.0.0.7', '169.254.169.254', '0.0.0.0', '::1'];
    dns.records.set('rebind.ssrf.test', answers[0]!);
    const { event } = await emit(store, { env: 'live' });
    const [first] = await eventually(() => deliveries(store, id, 'live'), (d) => d.length >= 1, 'the first delivery attempt');
    counts.fuzzedInputs++;
    expect(first).toMatchObject({ eventId: event.id, status: 'failed', responseStatus: null, responseBody: null });
    expect(first!.error).toMatch(/^not sent: the URL host 'rebind\.ssrf\.test' resolves to /);
    for (const answer of answers) {
      dns.records.set('rebind.ssrf.test', answer);
      const retry = await h.stack.request({ method: 'POST', url: `/v1/webhook-endpoints/${id}/deliveries/${first!.id}/retry`, key: store.keys.live.secretKey });
      counts.fuzzedInputs++;
      expect({ answer, status: retry.status }).toEqual({ answer, status: 200 });
      expect(retry.body).toMatchObject({ status: 'failed', responseStatus: null, responseBody: null });
      expect(retry.body.error).toMatch(/^not sent: the URL host 'rebind\.ssrf\.test' resolves to /);
    }
    counts.dialled += target.connections;
    expect(target.connections).toBe(0);
    expect(target.received).toEqual([]);
  });
});
