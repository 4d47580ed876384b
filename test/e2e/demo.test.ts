import { afterAll, describe, expect, it } from '@jest/globals';
import { mkdtemp, rm, stat } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import type { Browser } from 'playwright-core';
import { launchBrowser } from '../helpers/browser.js';
import { signInPage } from '../helpers/dashboard-users.js';
import { demoEnv, parseBanner, payByMpesa, runPayCommand, spawnDemo, type DemoProcess } from '../helpers/demo.js';
import { httpCall } from '../helpers/http.js';
import { eventually } from '../helpers/wait.js';

const dirs: string[] = [];
let browser: Browser | undefined;
let demo: DemoProcess | undefined;
afterAll(async () => {
  await demo?.stop();
  await browser?.close();
  for (const d of dirs) await rm(d, { recursive: true, force: true });
});

describe('npm run demo (a fresh clone, offline)', () => {
  it('pays one link by M-Pesa in the checkout and one by the printed USDT command; Ctrl-C stops it; a second run reuses the data', async () => {
    const dataDir = await mkdtemp(join(tmpdir(), 'malipo-demo-'));
    dirs.push(dataDir);
    const env = await demoEnv(dataDir);
    const api = `http://127.0.0.1:${env.PORT}`;
    demo = spawnDemo(env);
    await demo.waitFor('Malipo demo is ready', 120_000);
    const banner = parseBanner(demo.output());
    expect(banner.temporalUi).toBe(`http://127.0.0.1:${env.TEMPORAL_UI_PORT}`);
    expect(banner.payCommand).toBe(`npm run demo:pay -- ${banner.usdtLinkId} --data-dir ${dataDir}`);
    expect((await stat(join(dataDir, 'demo.json'))).mode & 0o777).toBe(0o600);

    browser = await launchBrowser();
    const mpesaLinkId = /\/p\/(pl_\w+)/.exec(banner.mpesaCheckoutUrl)![1]!;
    const [, payOut] = await Promise.all([payByMpesa(browser, banner), runPayCommand(banner.payCommand, env)]);
    expect(payOut).toContain(`${banner.usdtLinkId} is CONFIRMED (USDT_BSC`);

    const link = async (id: string) => (await httpCall(api, { method: 'GET', url: `/v1/payment-links/${id}`, headers: { 'x-api-key': banner.secretKey } })).body;
    expect(await link(mpesaLinkId)).toMatchObject({ status: 'CONFIRMED', confirmedRail: 'MOBILE_MONEY', payer: banner.phone });
    expect(await link(banner.usdtLinkId)).toMatchObject({ status: 'CONFIRMED', confirmedRail: 'USDT_BSC', amountReceived: '5' });

    // "Sweep the demo's payments": planned, signed offline with the demo mnemonic, broadcast; the destination holds the total.
    expect(banner.sweepCommand).toBe(`npm run demo:sweep -- --data-dir ${dataDir}`);
    const sweepOut = await runPayCommand(banner.sweepCommand, env);
    expect(sweepOut).toMatch(/Planned swp_\w+: 5 USDT on 1 address\(es\)/);
    expect(sweepOut).toContain('signed       ');
    const swept = /Destination (0x[0-9a-f]{40}) holds (\S+) USDT: (\S+) more, the total swept (\S+)/.exec(sweepOut)!;
    expect(swept.slice(2)).toEqual(['5', '5', '5']);
    const sweepId = /Planned (swp_\w+)/.exec(sweepOut)![1]!;
    expect((await httpCall(api, { method: 'GET', url: `/v1/sweeps/${sweepId}`, headers: { 'x-api-key': banner.secretKey } })).body).toMatchObject({ destination: swept[1], totalToken: '5' });

    // The demo's webhook receiver verified both events.
    // Each in the currency it was paid in: the KES of the M-Pesa link, the USDT of the other.
    const mpesaLink = await link(mpesaLinkId);
    expect(mpesaLink.amountsReceived).toEqual({ USDT: '0', KES: String(mpesaLink.mobileMoneyAmount) });
    await demo.waitFor(`webhook verified: payment_link.confirmed ${mpesaLinkId} MOBILE_MONEY ${mpesaLink.mobileMoneyAmount} KES`, 30_000);
    await demo.waitFor(`webhook verified: payment_link.confirmed ${banner.usdtLinkId} USDT_BSC 5 USDT`, 30_000);
    expect(demo.output()).not.toContain('webhook refused');

    // The dashboard, signed in with the printed account, lists both as confirmed.
    expect(banner.dashboardUrl).toBe(`${api}/dashboard/login`);
    const context = await browser.newContext();
    const page = await context.newPage();
    await signInPage(page, api, { email: banner.dashboardEmail, password: banner.dashboardPassword });
    const html = await page.content();
    expect(html).toContain(mpesaLinkId);
    expect(html).toContain(banner.usdtLinkId);
    await context.close();

    // The Temporal UI answers.
    expect((await fetch(banner.temporalUi)).status).toBe(200);

    expect(await demo.stop()).toBe(0);
    await eventually(async () => ((await fetch(`http://127.0.0.1:${env.DEMO_ANVIL_PORT}`).then(() => false, () => true)) ? true : undefined), 'anvil to stop', 15_000);

    // Second run on the same data: same store and keys, the paid links are still there.
    demo = spawnDemo(env);
    await demo.waitFor('Malipo demo is ready', 120_000);
    const again = parseBanner(demo.output());
    expect(again.secretKey).toBe(banner.secretKey);
    expect([again.dashboardEmail, again.dashboardPassword]).toEqual([banner.dashboardEmail, banner.dashboardPassword]);
    expect(await link(banner.usdtLinkId)).toMatchObject({ status: 'CONFIRMED' });
    expect(await link(mpesaLinkId)).toMatchObject({ status: 'CONFIRMED' });
    expect(again.usdtLinkId).not.toBe(banner.usdtLinkId);
    // The chain kept its tokens and balances: a new link pays again.
    expect(await runPayCommand(again.payCommand, env)).toContain(`${again.usdtLinkId} is CONFIRMED`);
    expect(await demo.stop()).toBe(0);
  }, 420_000);
});
