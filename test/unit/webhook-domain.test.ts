import { describe, expect, it } from '@jest/globals';
import { Webhook } from 'standardwebhooks';
import { generateWebhookSecret, webhookHeaders } from '../../domain/webhooks/signing.js';
import { maxAttempts, retryDelayMs, retryScheduleSeconds } from '../../domain/webhooks/retry-schedule.js';
import { checkAddress, testAllowList } from '../../domain/webhooks/address-policy.js';
import { checkWebhookUrl, isForbiddenAddress } from '../../domain/webhooks/url-policy.js';
import { ConfigError, loadConfig } from '../../config/config.js';

describe('webhook signing', () => {
  it('produces headers the standardwebhooks library verifies, with either secret during a roll', () => {
    const [current, previous] = [generateWebhookSecret(), generateWebhookSecret()];
    expect(current).toMatch(/^whsec_[A-Za-z0-9+/]{32}$/);
    const body = JSON.stringify({ id: 'evt_1', type: 'payment_link.confirmed', data: { metadata: { a: 'ü' } } });
    const ts = Math.floor(Date.now() / 1000);
    const headers = webhookHeaders([current, previous], 'evt_1', ts, body);
    expect(headers['webhook-signature'].split(' ')).toHaveLength(2);
    expect(new Webhook(current).verify(body, { ...headers })).toEqual(JSON.parse(body));
    expect(new Webhook(previous).verify(body, { ...headers })).toEqual(JSON.parse(body));
    expect(() => new Webhook(generateWebhookSecret()).verify(body, { ...headers })).toThrow('No matching signature');
    expect(() => new Webhook(current).verify(`${body} `, { ...headers })).toThrow('No matching signature');
  });
});

describe('retry schedule', () => {
  it('is the Standard Webhooks schedule of ten attempts over about three days', () => {
    expect(maxAttempts).toBe(10);
    expect(retryScheduleSeconds.reduce((a, b) => a + b, 0) / 3600).toBeCloseTo(75.6, 1);
    expect(retryDelayMs(0, 1, 0.5)).toBe(0);
    expect(retryDelayMs(1, 1, 0.5)).toBe(5000);
    expect(retryDelayMs(9, 1, 0.5)).toBe(86_400_000);
  });

  it('jitters by at most 10 % and scales', () => {
    expect(retryDelayMs(2, 1, 0)).toBe(270_000);
    expect(retryDelayMs(2, 1, 0.999999)).toBe(330_000);
    expect(retryDelayMs(3, 0.001, 0.5)).toBe(1800);
    expect(retryDelayMs(1, 0.000001, 0.5)).toBe(10);
    expect(() => retryDelayMs(10, 1, 0.5)).toThrow('no attempt 11');
  });
});

describe('webhook URL policy', () => {
  it.each([
    '127.0.0.1', '10.1.2.3', '172.20.0.1', '192.168.1.1', '169.254.169.254', '100.100.100.200', '0.0.0.0',
    '::1', '::', '::ffff:127.0.0.1', '::ffff:7f00:1', '::ffff:a9fe:a9fe', 'fd00:ec2::254', 'fe80::1%eth0', '64:ff9b::a00:1', 'ff02::1',
    '::ffff:0:a9fe:a9fe', '::ffff:0:7f00:1', '2002:a9fe:a9fe::1', '2002:7f00:1::', '2002:a00:1::5',
    'not-an-ip',
  ])('forbids %s', (address) => expect(isForbiddenAddress(address)).toBe(true));

  it.each(['93.184.216.34', '8.8.8.8', '2606:4700::6810:84e5', '::ffff:93.184.216.34'])('allows %s', (address) =>
    expect(isForbiddenAddress(address)).toBe(false));

  it.each([
    ['http://example.com/hook', 'https://'],
    ['https://localhost/hook', 'internal name'],
    ['https://intranet/hook', 'internal name'],
    ['https://metadata.google.internal/computeMetadata', 'internal name'],
    ['https://127.0.0.1/hook', 'private, loopback'],
    ['https://0x7f000001/hook', 'private, loopback'],
    ['https://2130706433/hook', 'private, loopback'],
    ['https://[::ffff:127.0.0.1]/hook', 'private, loopback'],
    ['https://169.254.169.254/latest/meta-data', 'private, loopback'],
    ['https://user:pw@example.com/hook', 'user name or password'],
    ['ftp://example.com/hook', 'must start with https://'],
    ['/relative', 'absolute URL'],
  ])('refuses %s in live', (url, message) => {
    const check = checkWebhookUrl(url, 'live');
    expect(check.ok).toBe(false);
    if (!check.ok) expect(check.message).toContain(message);
  });

  it('lets test webhooks reach private addresses only inside the allowed networks, never link-local, never in live', () => {
    const allowed = testAllowList(['127.0.0.0/8', '::1/128', '172.17.0.0/16']);
    for (const address of ['127.0.0.1', '127.9.9.9', '::1', '::ffff:127.0.0.1', '172.17.0.2']) {
      expect({ address, verdict: checkAddress(address, 'test', allowed) }).toEqual({ address, verdict: { ok: true, internal: true } });
    }
    expect(checkAddress('93.184.216.34', 'test', allowed)).toEqual({ ok: true, internal: false });
    expect(checkAddress('93.184.216.34', 'live', allowed)).toEqual({ ok: true, internal: false });
    const refused = (address: string, env: 'test' | 'live', list = allowed) => {
      const v = checkAddress(address, env, list);
      return v.ok ? 'allowed' : v.reason;
    };
    expect(refused('172.18.0.1', 'test')).toBe('172.18.0.1, a private address; test webhooks reach loopback and private addresses only where the operator allows them (WEBHOOK_TEST_ALLOWED_NETWORKS)');
    expect(refused('127.0.0.1', 'live')).toBe('127.0.0.1, a loopback address; live webhooks only go to public addresses');
    expect(refused('2002:7f00:1::', 'test')).toContain('2002:7f00:1:: (6to4 for 127.0.0.1), a loopback address');
    expect(refused('::ffff:a9fe:a9fe', 'test')).toBe('::ffff:a9fe:a9fe (169.254.169.254), a link-local address, which webhooks never reach');
    // Even an allow-list that names them (the configuration refuses that) never opens link-local or unspecified addresses.
    const reckless = testAllowList(['0.0.0.0/0', '::/0']);
    for (const address of ['169.254.169.254', '0.0.0.0', 'fe80::1', '::', '224.0.0.1']) expect(refused(address, 'test', reckless)).toContain('which webhooks never reach');
  });

  it('accepts public https URLs in live and any http(s) URL in test', () => {
    expect(checkWebhookUrl('https://example.com/hook', 'live').ok).toBe(true);
    expect(checkWebhookUrl('https://93.184.216.34/hook', 'live')).toMatchObject({ ok: true, ipLiteral: '93.184.216.34' });
    expect(checkWebhookUrl('http://127.0.0.1:8080/hook', 'test').ok).toBe(true);
    expect(checkWebhookUrl('http://localhost/hook', 'test').ok).toBe(true);
    expect(checkWebhookUrl('ftp://localhost/hook', 'test').ok).toBe(false);
  });
});

describe('webhook settings', () => {
  const cluster = { DATABASE_URL: 'postgres://db/malipo', TEMPORAL_ADDRESS: 'temporal:7233' };

  it('defaults to the real schedule, the system resolvers and no private test targets', () => {
    expect(loadConfig(cluster).webhooks).toEqual({ retryScale: 1, dnsServers: [], testAllowedNetworks: [], relay: { enabled: true, pollMs: 100 } });
  });

  it('lets test webhooks reach loopback by default only in the embedded one-command setup', () => {
    expect(loadConfig({}).webhooks.testAllowedNetworks).toEqual(['127.0.0.0/8', '::1/128']);
    expect(loadConfig({ WEBHOOK_TEST_ALLOWED_NETWORKS: 'none' }).webhooks.testAllowedNetworks).toEqual([]);
    expect(loadConfig({ DATABASE_URL: 'postgres://db/malipo' }).webhooks.testAllowedNetworks).toEqual([]);
  });

  it('reads WEBHOOK_TEST_ALLOWED_NETWORKS: names, CIDRs and single addresses', () => {
    const c = loadConfig({ ...cluster, WEBHOOK_TEST_ALLOWED_NETWORKS: 'loopback, 172.17.0.0/16,fd00::/8, 10.1.2.3 ,::ffff:192.168.5.0/120' });
    expect(c.webhooks.testAllowedNetworks).toEqual(['127.0.0.0/8', '::1/128', '172.17.0.0/16', 'fd00::/8', '10.1.2.3/32', '192.168.5.0/24']);
    expect(loadConfig({ ...cluster, WEBHOOK_TEST_ALLOWED_NETWORKS: 'private' }).webhooks.testAllowedNetworks).toEqual([
      '127.0.0.0/8', '::1/128', '10.0.0.0/8', '172.16.0.0/12', '192.168.0.0/16', 'fc00::/7',
    ]);
  });

  it.each([
    ['0.0.0.0/0', 'link-local'], ['169.254.0.0/16', 'link-local'], ['169.254.169.254', 'link-local'], ['160.0.0.0/4', 'link-local'],
    ['fe80::/10', 'link-local'], ['::/0', 'link-local'], ['0.0.0.0', 'unspecified'], ['224.0.0.1', 'multicast'], ['::ffff:169.254.0.0/112', 'link-local'],
    ['10.0.0.0/33', 'not a network'], ['bogus', 'not a network'], ['10.0.0.0/8/1', 'not a network'], ['loopback,none', 'none'],
  ])('refuses WEBHOOK_TEST_ALLOWED_NETWORKS=%s', (value, message) => {
    expect(() => loadConfig({ ...cluster, WEBHOOK_TEST_ALLOWED_NETWORKS: value })).toThrow(message);
  });

  it('reads WEBHOOK_RETRY_SCALE and WEBHOOK_DNS_SERVERS', () => {
    const c = loadConfig({ ...cluster, WEBHOOK_RETRY_SCALE: '0.00002', WEBHOOK_DNS_SERVERS: '127.0.0.1:5353, 1.1.1.1' });
    expect(c.webhooks).toEqual({ retryScale: 0.00002, dnsServers: ['127.0.0.1:5353', '1.1.1.1'], testAllowedNetworks: [], relay: { enabled: true, pollMs: 100 } });
  });

  it('reads WEBHOOK_RELAY and WEBHOOK_RELAY_POLL_MS at both ends of the pause allowed', () => {
    expect(loadConfig({ ...cluster, WEBHOOK_RELAY: 'off', WEBHOOK_RELAY_POLL_MS: '10' }).webhooks.relay).toEqual({ enabled: false, pollMs: 10 });
    expect(loadConfig({ ...cluster, WEBHOOK_RELAY_POLL_MS: '60000' }).webhooks.relay).toEqual({ enabled: true, pollMs: 60_000 });
  });

  it.each([['WEBHOOK_RELAY_POLL_MS', '9'], ['WEBHOOK_RELAY_POLL_MS', '60001'], ['WEBHOOK_RELAY_POLL_MS', '100.5'], ['WEBHOOK_RELAY_POLL_MS', 'soon'], ['WEBHOOK_RELAY', 'yes']])(
    'refuses %s=%s', (name, value) => {
      expect(() => loadConfig({ ...cluster, [name]: value })).toThrow(name);
    });

  it.each(['0', '-1', '2', 'fast'])('refuses WEBHOOK_RETRY_SCALE=%s', (value) => {
    expect(() => loadConfig({ WEBHOOK_RETRY_SCALE: value })).toThrow(ConfigError);
  });
});
