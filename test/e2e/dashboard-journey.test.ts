import { afterAll, beforeAll, describe, expect, it } from '@jest/globals';
import { mkdirSync, rmSync } from 'node:fs';
import { join } from 'node:path';
import type { Browser, BrowserContext, Page } from 'playwright-core';
import { Webhook } from 'standardwebhooks';
import { formatKeyEntry, generateKey } from '../../domain/crypto/credentials.js';
import { receiveBranch } from '../../domain/hd/derive.js';
import { deriveAddress } from '../../rails/chain/derive-address.js';
import { sandboxTestPhone } from '../../emulators/daraja/sandbox.js';
import { startDarajaEmulator, type DarajaEmulator } from '../../emulators/daraja/server.js';
import { axeViolations, chooseRail, desktop, freePort, launchBrowser, phone, saveScreenshot, type AxeViolation } from '../helpers/browser.js';
import { sandboxPaybill } from '../helpers/daraja.js';
import { randomAccountXpubs } from '../helpers/fixtures.js';
import { startStack, type Stack } from '../helpers/stack.js';
import { eventually } from '../helpers/wait.js';
import { WebhookReceiver } from '../helpers/webhook-receiver.js';

/**
 * The merchant's main journey in Chromium, end to end against real parts: sign up, connect M-Pesa
 * against the Daraja emulator, register wallets, add a webhook endpoint, invite a viewer (who
 * joins in another browser), create a link from the form, pay it as a customer on a phone through
 * the hosted checkout, follow it to CONFIRMED with its timeline and its signed webhook, switch to
 * live and back, change the password. Everything the journey does goes through the pages: no
 * database write and no API call stands in for a step. Every page is photographed (desktop, and
 * phone width) into artifacts/dashboard/journey/ and checked with axe-core.
 */
const paybill = sandboxPaybill('journey-7b3d');
const shots = 'dashboard/journey';
let daraja: DarajaEmulator;
let stack: Stack;
let browser: Browser;
let receiver: WebhookReceiver;
/** The owner's browser: a laptop. */
let owner: Page;

const storeName = 'Mama Njeri Groceries';
const email = `njeri-${Date.now().toString(36)}@example.test`;
const password = 'sukuma wiki every tuesday';
const newPassword = 'chapati and beans on friday';
const viewerEmail = `viewer-${Date.now().toString(36)}@example.test`;
const viewerPassword = 'a viewer only looks around';
const xpubs = randomAccountXpubs();
const hookPath = '/journey-hooks';

/** Shared by the steps, in order. */
const journey: { secret?: string; endpointId?: string; linkId?: string; checkoutUrl?: string } = {};

/** Every serious or critical axe finding, by page; asserted empty at the end so one run lists them all. */
const accessibility: { page: string; violation: AxeViolation }[] = [];
/** Script errors and console errors seen on any page. */
const complaints: string[] = [];
let shotNumber = 0;

beforeAll(async () => {
  rmSync(join(process.cwd(), 'artifacts', shots), { recursive: true, force: true });
  mkdirSync(join(process.cwd(), 'artifacts', shots), { recursive: true });
  daraja = await startDarajaEmulator({ merchants: [paybill] });
  receiver = await WebhookReceiver.start();
  const port = await freePort();
  stack = await startStack({
    PORT: String(port), PUBLIC_BASE_URL: `http://127.0.0.1:${port}`,
    MPESA_SANDBOX_URL: daraja.url, ENCRYPTION_KEY: formatKeyEntry(generateKey('journey')),
    WEBHOOK_TEST_ALLOWED_NETWORKS: 'loopback', // the webhook receiver listens on 127.0.0.1
    WEBHOOK_RETRY_SCALE: '0.001',
  });
  browser = await launchBrowser();
  owner = await newPage(desktop);
}, 120_000);
afterAll(async () => {
  await browser?.close();
  await stack?.stop();
  await receiver?.down();
  await daraja?.close();
});

/** A fresh browser (its own cookies). `bypassCSP`: axe-core is injected into the pages. */
async function newPage(device = desktop): Promise<Page> {
  const context: BrowserContext = await browser.newContext({ ...device, bypassCSP: true, locale: 'en-KE' });
  const page = await context.newPage();
  // Forms refused on purpose answer 4xx, logged as "Failed to load resource"; anything else counts.
  page.on('console', (m) => m.type() === 'error' && !m.text().startsWith('Failed to load resource') && complaints.push(`${page.url()}: ${m.text()}`));
  page.on('pageerror', (e) => complaints.push(`${page.url()}: ${e.message}`));
  return page;
}

/**
 * Photographs the page as it is now, at 1280×800 and (unless `phoneToo` is false) at phone width
 * (360×740: the same page resized, so a page that only a POST answered, like a secret shown once,
 * is photographed too), and runs axe-core on it at each width.
 */
async function look(page: Page, name: string, opts: { phoneToo?: boolean; axe?: boolean } = {}): Promise<void> {
  const nn = String(++shotNumber).padStart(2, '0');
  const size = page.viewportSize();
  const check = async (device: string) => {
    await saveScreenshot(page, `${shots}/${nn}-${name}-${device}.png`);
    if (opts.axe === false) return;
    for (const violation of await axeViolations(page)) {
      if (violation.impact === 'serious' || violation.impact === 'critical') {
        accessibility.push({ page: `${nn}-${name} (${device}) ${new URL(page.url()).pathname}`, violation });
      }
    }
  };
  const wide = !size || size.width >= 600;
  await check(wide ? 'desktop' : 'phone');
  if (opts.phoneToo !== false && size && wide) {
    await page.setViewportSize({ width: 360, height: 740 });
    await check('phone');
    await page.setViewportSize(size);
  }
}

const text = (page: Page, selector: string) => page.locator(selector).innerText();
const nav = async (page: Page, label: string) => {
  await page.click(`nav[aria-label="Sections"] >> text="${label}"`);
  await page.waitForLoadState();
};

describe('the merchant journey', () => {
  it('1. signs up, and lands on the dashboard in test mode', async () => {
    await owner.goto(`${stack.baseUrl}/dashboard/signup`);
    await look(owner, 'signup');
    await owner.fill('#f-storeName', storeName);
    await owner.fill('#f-email', email);
    await owner.fill('#f-password', password);
    await owner.click('button:has-text("Create account")');
    await owner.waitForURL(`${stack.baseUrl}/dashboard?welcome=1`);
    await expect(text(owner, 'h1')).resolves.toBe('Payment links');
    await expect(text(owner, '.notice.ok')).resolves.toContain('Welcome to Malipo');
    await expect(owner.title()).resolves.toContain('(test mode)');
    const banner = await text(owner, '[data-testid="environment"]');
    expect(banner).toContain('Test mode');
    expect(banner).toContain('your role: Owner');
    await expect(text(owner, '[data-testid="store-name"]')).resolves.toBe(storeName);
    await expect(text(owner, 'a.account')).resolves.toBe(email);
    await expect(text(owner, '.empty')).resolves.toContain('No payment links');
    // No rail is connected yet: every rail is greyed out with a link to connect it.
    await expect(owner.locator('input[name="enabledRails"]:not([disabled])').count()).resolves.toBe(0);
    await look(owner, 'links-empty');
  });

  it("2. connects M-Pesa with the five inputs: the operator's refusal first, then the shortcode", async () => {
    await nav(owner, 'Mobile money');
    await expect(text(owner, '[data-testid="mpesa-connection"]')).resolves.toContain('No M-Pesa shortcode is connected');
    await look(owner, 'mobile-money');
    const connect = async (consumerSecret: string) => {
      await owner.fill('#f-consumerKey', paybill.consumerKey);
      await owner.fill('#f-consumerSecret', consumerSecret);
      await owner.fill('#f-shortcode', paybill.shortCode);
      await owner.fill('#f-passkey', paybill.passkey);
      await owner.selectOption('#f-environment', 'sandbox');
      await owner.click('button:has-text("Check and connect")');
      await owner.waitForLoadState();
    };
    await connect(`${paybill.consumerSecret}-typo`);
    // The operator's own words, in the connect card, above its form.
    const refusal = await text(owner, 'section[aria-labelledby="connect"] .notice.error');
    expect(refusal).toContain('M-Pesa rejected the credentials');
    expect(refusal).toContain('Invalid Authentication passed');
    expect(refusal).toContain('Nothing was saved');
    await expect(text(owner, '[data-testid="mpesa-connection"]')).resolves.toContain('No M-Pesa shortcode is connected');
    await expect(owner.locator('#f-consumerSecret').inputValue()).resolves.toBe('');
    await look(owner, 'mobile-money-refused');

    await connect(paybill.consumerSecret);
    await owner.waitForURL(`${stack.baseUrl}/dashboard/mobile-money?connected=1`);
    await expect(text(owner, '[role="status"]')).resolves.toContain('the shortcode is connected');
    await expect(text(owner, '[data-testid="mpesa-shortcode"]')).resolves.toBe(paybill.shortCode);
    await expect(text(owner, '[data-testid="mpesa-environment"]')).resolves.toBe('sandbox');
    const html = await owner.content();
    for (const secret of [paybill.consumerKey, paybill.consumerSecret, paybill.passkey]) expect(html).not.toContain(secret);
    // The C2B URLs are registered; Pull Transactions was not asked for (no nominated number).
    await expect(text(owner, '[data-testid="mpesa-c2b"]')).resolves.toContain('URLs registered (v2)');
    await expect(text(owner, '[data-testid="mpesa-pull"]')).resolves.toContain('Not registered');
    await expect(text(owner, '[data-testid="mpesa-settles-alone"]')).resolves.toBe('settle a link by themselves');
    await look(owner, 'mobile-money-connected');

    // Reconnecting with a nominated number and the policy chosen; Daraja refuses the Pull registration once.
    const withPull = async () => {
      await owner.selectOption('#f-c2bUnallocatedAllowed', 'true');
      await owner.fill('#f-c2bPullNominatedNumber', sandboxTestPhone);
      await connect(paybill.consumerSecret);
      await owner.waitForURL(`${stack.baseUrl}/dashboard/mobile-money?connected=1`);
    };
    daraja.failNext(1, 'spike_arrest', '/pulltransactions/v1/register');
    await withPull();
    const refused = await text(owner, '[data-testid="mpesa-pull-error"]');
    expect(refused).toContain('Daraja refused to register Pull Transactions');
    expect(refused).toContain('Spike Arrest Violation');
    await expect(text(owner, '[data-testid="mpesa-c2b"]')).resolves.toContain('URLs registered (v2)');
    await expect(text(owner, '[data-testid="mpesa-unallocated-allowed"]')).resolves.toBe('accepted at validation, kept as unallocated');
    // The form shows the policy in force.
    await expect(owner.locator('#f-c2bUnallocatedAllowed').inputValue()).resolves.toBe('true');
    await look(owner, 'mobile-money-pull-refused');
    await withPull();
    await expect(text(owner, '[data-testid="mpesa-pull"]')).resolves.toMatch(/^Registered .+; last pulled not yet$/);
    await expect(owner.locator('[data-testid="mpesa-pull-error"]').count()).resolves.toBe(0);
    expect(daraja.pullRegistrations.get(paybill.shortCode)?.nominatedNumber).toBe(sandboxTestPhone);
  });

  it('3. registers the EVM and TRON xpubs; the first addresses shown are index 0 of each', async () => {
    await nav(owner, 'Wallets');
    await look(owner, 'wallets');
    for (const slot of ['evm', 'tron'] as const) {
      const card = owner.locator(`[data-wallet="${slot}"]`);
      await card.locator('input[name="xpub"]').fill(xpubs[slot]);
      await card.locator('button:has-text("Register")').click();
      await owner.waitForURL(`${stack.baseUrl}/dashboard/wallets?connected=${slot}`);
      await expect(text(owner, `[data-wallet="${slot}"] .status`)).resolves.toBe('Connected');
      await expect(text(owner, `[data-testid="first-address-${slot}"]`)).resolves.toBe(deriveAddress(xpubs[slot], slot, receiveBranch, 0));
    }
    expect(await text(owner, '[data-testid="first-address-evm"]')).toMatch(/^0x[0-9a-fA-F]{40}$/);
    expect(await text(owner, '[data-testid="first-address-tron"]')).toMatch(/^T[1-9A-HJ-NP-Za-km-z]{33}$/);
    await look(owner, 'wallets-connected');
  });

  it('4. adds a webhook endpoint and reads its secret, shown once', async () => {
    await nav(owner, 'Webhooks');
    await expect(text(owner, '.empty')).resolves.toContain('No webhook endpoints yet');
    await look(owner, 'webhooks');
    await owner.fill('#f-url', receiver.url(hookPath));
    await owner.click('button:has-text("Add endpoint")');
    const secret = await text(owner, '[data-testid="webhook-secret"]');
    expect(secret).toMatch(/^whsec_[A-Za-z0-9+/=]+$/);
    journey.secret = secret;
    journey.endpointId = (await owner.locator('tr[data-endpoint]').getAttribute('data-endpoint'))!;
    await expect(text(owner, `tr[data-endpoint="${journey.endpointId}"] [data-testid="endpoint-status"]`)).resolves.toBe('enabled');
    await look(owner, 'webhook-secret');
    // Once: the list, opened again, does not show it.
    await nav(owner, 'Webhooks');
    expect(await owner.content()).not.toContain(secret);
  });

  it('5. invites a viewer, who joins in another browser and sees the pages without any action', async () => {
    await nav(owner, 'Team');
    await look(owner, 'team');
    await owner.fill('#f-email', viewerEmail);
    await owner.selectOption('#f-role', 'viewer');
    await owner.click('button:has-text("Create invitation link")');
    const invitation = await text(owner, '[data-testid="invitation-link"]');
    expect(invitation).toMatch(new RegExp(`^${stack.baseUrl}/dashboard/invitations/\\S+$`));
    await expect(text(owner, `tr[data-invitation="${viewerEmail}"]`)).resolves.toContain('Viewer');
    await look(owner, 'team-invitation');

    const viewer = await newPage(desktop);
    try {
      await viewer.goto(invitation);
      await expect(text(viewer, 'h1')).resolves.toBe(`Join ${storeName}`);
      await expect(text(viewer, '.card')).resolves.toContain('You are invited as Viewer');
      await look(viewer, 'invitation');
      await viewer.fill('#f-password', viewerPassword);
      await viewer.click('button:has-text("Create account and join")');
      await viewer.waitForURL(`${stack.baseUrl}/dashboard?joined=1`);
      await expect(text(viewer, '[data-testid="environment"]')).resolves.toContain('your role: Viewer');
      await expect(text(viewer, '[data-testid="store-name"]')).resolves.toBe(storeName);
      // No create form on the links page.
      await expect(viewer.locator('form[action="/dashboard/links"], button:has-text("Create link")').count()).resolves.toBe(0);
      await look(viewer, 'viewer-links');
      await nav(viewer, 'Mobile money');
      await expect(text(viewer, '[data-testid="mpesa-shortcode"]')).resolves.toBe(paybill.shortCode);
      await expect(viewer.locator('button:has-text("Check and connect")').count()).resolves.toBe(0);
      await nav(viewer, 'Wallets');
      await expect(viewer.locator('[data-wallet] button').filter({ hasNotText: 'Copy' }).count()).resolves.toBe(0);
      await expect(text(viewer, '[data-wallet="evm"]')).resolves.toContain('Only an owner can register or change where payments go.');
      await look(viewer, 'viewer-wallets');
      await nav(viewer, 'Webhooks');
      await expect(viewer.locator(`tr[data-endpoint="${journey.endpointId}"]`).count()).resolves.toBe(1);
      await expect(viewer.locator('main button').count()).resolves.toBe(0);
      await nav(viewer, 'Team');
      await expect(viewer.locator('main button, main select').count()).resolves.toBe(0);
      await expect(text(viewer, `tr[data-member="${viewerEmail}"] [data-testid="role"]`)).resolves.toBe('Viewer');
      await look(viewer, 'viewer-team');
    } finally {
      await viewer.context().close();
    }

    // The owner sees the new member, and the invitation is used up. (Not a reload: that page
    // answered the invitation's POST, and a reload would post it again.)
    await nav(owner, 'Team');
    await expect(text(owner, `tr[data-member="${viewerEmail}"] [data-testid="role"]`)).resolves.toBe('Viewer');
    await expect(owner.locator(`tr[data-invitation="${viewerEmail}"]`).count()).resolves.toBe(0);
    await look(owner, 'team-members');
  });

  it('6. creates a link from the form; a customer pays it by M-Pesa on the checkout, which turns to paid', async () => {
    await nav(owner, 'Payment links');
    // M-Pesa and the wallets' rails are now offered.
    for (const rail of ['MOBILE_MONEY', 'USDT_BSC', 'USDT_TRON']) {
      await expect(owner.locator(`input[name="enabledRails"][value="${rail}"]`).isDisabled()).resolves.toBe(false);
    }
    await owner.check('input[name="enabledRails"][value="MOBILE_MONEY"]');
    await owner.check('input[name="enabledRails"][value="USDT_BSC"]');
    await owner.fill('#f-usdtAmount', '5');
    await owner.fill('#f-description', 'Sukuma wiki and 2 kg unga');
    await owner.fill('#f-merchantRef', 'order-journey-1');
    await owner.fill('#f-metadata', '{"orderId": "J-1", "items": 2}');
    await owner.click('button:has-text("Create link")');
    await owner.waitForURL(/\/dashboard\?created=pl_/);
    const id = new URL(owner.url()).searchParams.get('created')!;
    const checkoutUrl = (await owner.getByTestId('created-link').getAttribute('href'))!;
    expect(checkoutUrl).toBe(`${stack.baseUrl}/p/${id}`);
    journey.linkId = id;
    journey.checkoutUrl = checkoutUrl;
    const row = owner.locator(`tr[data-link="${id}"]`);
    await expect(row.locator('.status').innerText()).resolves.toBe('PENDING');
    await expect(row.innerText()).resolves.toMatch(/5 USDT[\s\S]*M-Pesa[\s\S]*order-journey-1/);
    await look(owner, 'links-created');

    // The customer, on a phone, in a browser of their own.
    const customer = await newPage(phone);
    try {
      await customer.goto(checkoutUrl);
      await expect(text(customer, 'h1')).resolves.toBe(`Pay ${storeName}`);
      await look(customer, 'checkout');
      await chooseRail(customer, 'MOBILE_MONEY');
      await customer.fill('#phone', `0${sandboxTestPhone.slice(3)}`);
      await look(customer, 'checkout-mpesa');
      await customer.click('button[type=submit]');
      await customer.waitForSelector('main[data-state="mpesa-waiting"]');
      await expect(text(customer, '#state-title')).resolves.toBe('Check your phone');
      await look(customer, 'checkout-check-your-phone');
      // The customer approves on the phone: the emulator settles the prompt and calls Malipo back.
      const prompt = await eventually(async () => daraja.state.openPromptFor(sandboxTestPhone), 'the prompt at the Daraja emulator', 15_000);
      await daraja.complete(prompt.checkoutRequestId, 'success');
      expect(prompt.deliveries).toEqual([{ status: 200 }]);
      // The page's own polling turns it to paid.
      await customer.waitForSelector('main[data-state="confirmed"]', { timeout: 30_000 });
      await expect(customer.getByTestId('final-state').innerText()).resolves.toContain('Payment received');
      await expect(customer.getByTestId('paid-amount').innerText()).resolves.toMatch(/^Paid KES [\d,]+ by M-Pesa$/);
      await look(customer, 'checkout-paid');
    } finally {
      await customer.context().close();
    }
  });

  it('7. shows the link CONFIRMED with its timeline, a verified payment_link.confirmed webhook and its delivery', async () => {
    const id = journey.linkId!;
    await owner.reload();
    await owner.click(`tr[data-link="${id}"] a.link-id`);
    await owner.waitForURL(`${stack.baseUrl}/dashboard/links/${id}`);
    // The webhook attempt is logged just after the receiver answers: reload until it is there.
    const timeline = await eventually(async () => {
      await owner.reload();
      const t = await text(owner, '[data-testid="timeline"]');
      return t.includes('Webhook attempt 1: succeeded (HTTP 200)') ? t : undefined;
    }, 'the webhook attempt on the timeline', 30_000);
    await expect(text(owner, '[data-testid="link-status"]')).resolves.toContain('CONFIRMED');
    await expect(text(owner, '[data-testid="link-received"]')).resolves.toMatch(/^\d+ KES$/);
    // The workflow records CONFIRMED after the activity that counted the payment and wrote its event,
    // while the outbox relay sends that event the moment it commits: either may come first.
    for (const order of [
      ['Link created', 'Workflow started', 'M-Pesa prompt requested', 'M-Pesa prompt sent to the phone', 'M-Pesa callback stored', 'Payment counted', 'Status CONFIRMED'],
      ['Payment counted', 'Webhook attempt 1: succeeded (HTTP 200)'],
    ]) {
      const positions = order.map((title) => timeline.indexOf(title));
      expect(Object.fromEntries(order.map((t, i) => [t, positions[i]! >= 0]))).toEqual(Object.fromEntries(order.map((t) => [t, true])));
      expect([...positions].sort((a, b) => a - b)).toEqual(positions);
    }
    expect(timeline).toContain('M-Pesa callback received by the workflow');
    expect(timeline).toContain(receiver.url(hookPath));
    expect(timeline).toContain(`2547•••••${sandboxTestPhone.slice(-3)}`);
    expect(JSON.parse(await text(owner, '[data-testid="link-metadata"]'))).toEqual({ orderId: 'J-1', items: 2 });
    await expect(text(owner, '[data-testid="payments"]')).resolves.toMatch(/M-Pesa[\s\S]*KES[\s\S]*confirmed/);
    expect(await owner.content()).not.toContain(journey.secret!);
    await look(owner, 'link-detail');

    // What the merchant's server received verifies with the secret the page showed.
    await receiver.waitFor(() => receiver.requestsTo(hookPath).length > 0, 'the webhook at the receiver');
    const [delivered, ...more] = receiver.requestsTo(hookPath);
    expect(more).toEqual([]);
    const event = new Webhook(journey.secret!).verify(delivered!.body, delivered!.headers as Record<string, string>) as { type: string; data: Record<string, unknown> };
    expect(event.type).toBe('payment_link.confirmed');
    expect(event.data).toMatchObject({ id, status: 'CONFIRMED', confirmedRail: 'MOBILE_MONEY', merchantRef: 'order-journey-1', metadata: { orderId: 'J-1', items: 2 } });
    expect(() => new Webhook(`whsec_${Buffer.from('another secret!!').toString('base64')}`).verify(delivered!.body, delivered!.headers as Record<string, string>)).toThrow();

    await nav(owner, 'Webhooks');
    await owner.click(`tr[data-endpoint="${journey.endpointId}"] a:has-text("Deliveries")`);
    await owner.waitForURL(`${stack.baseUrl}/dashboard/webhooks/${journey.endpointId}`);
    const delivery = owner.locator('tr[data-delivery]');
    await expect(delivery.count()).resolves.toBe(1);
    await expect(delivery.innerText()).resolves.toMatch(/payment_link\.confirmed[\s\S]*succeeded[\s\S]*200/);
    await expect(text(owner, 'tr[data-delivery] [data-testid="response-status"]')).resolves.toBe('200');
    await owner.click('tr.delivery-detail summary');
    await expect(text(owner, '[data-testid="payload"]')).resolves.toContain(id);
    await look(owner, 'webhook-deliveries');

    await nav(owner, 'Payment links');
    await expect(text(owner, `tr[data-link="${id}"] .status`)).resolves.toBe('CONFIRMED');
    await look(owner, 'links-confirmed');
  });

  it('8. switches to live mode with the header button: no links there, a Live mode banner; then back', async () => {
    await owner.click('[data-testid="switch-environment"]');
    await owner.locator('[data-testid="environment"]', { hasText: 'Live mode' }).waitFor();
    expect(owner.url()).toBe(`${stack.baseUrl}/dashboard`);
    await expect(owner.title()).resolves.not.toContain('test mode');
    await expect(owner.locator('tr[data-link]').count()).resolves.toBe(0);
    await expect(text(owner, '.empty')).resolves.toContain('No payment links');
    await expect(text(owner, '[data-testid="switch-environment"]')).resolves.toBe('Switch to test mode');
    await look(owner, 'live-links');
    await owner.click('[data-testid="switch-environment"]');
    await owner.locator('[data-testid="environment"]', { hasText: 'Test mode' }).waitFor();
    await expect(owner.locator(`tr[data-link="${journey.linkId}"]`).count()).resolves.toBe(1);
  });

  it('9. changes the password, signs out, and signs in with the new one', async () => {
    await owner.click('a.account');
    await owner.waitForURL(`${stack.baseUrl}/dashboard/account`);
    await expect(text(owner, '[data-testid="account-email"]')).resolves.toBe(email);
    await look(owner, 'account');
    await owner.fill('#f-currentPassword', password);
    await owner.fill('#f-newPassword', newPassword);
    await owner.click('button:has-text("Change password")');
    await owner.waitForURL(`${stack.baseUrl}/dashboard/account?passwordChanged=1`);
    await expect(text(owner, '[role="status"]')).resolves.toContain('Your password is changed');
    await look(owner, 'account-password-changed');

    await owner.click('button:has-text("Sign out")');
    await owner.waitForURL(`${stack.baseUrl}/dashboard/login?signedOut=1`);
    await expect(text(owner, '[role="status"]')).resolves.toBe('You are signed out.');
    await expect(owner.context().cookies()).resolves.toEqual([]);
    await look(owner, 'signed-out');

    const signIn = async (pw: string) => {
      await owner.fill('#f-email', email);
      await owner.fill('#f-password', pw);
      await owner.click('button:has-text("Sign in")');
      await owner.waitForLoadState();
    };
    await signIn(password);
    await expect(text(owner, '[data-error-for="password"]')).resolves.toContain('The email or password is wrong.');
    await look(owner, 'sign-in-old-password');
    await signIn(newPassword);
    await owner.waitForURL(`${stack.baseUrl}/dashboard`);
    await expect(text(owner, '[data-testid="environment"]')).resolves.toContain('Test mode');
    await expect(owner.locator(`tr[data-link="${journey.linkId}"]`).count()).resolves.toBe(1);
    // Neither password reached a page or a cookie.
    const html = await owner.content();
    for (const pw of [password, newPassword]) expect(html).not.toContain(pw);
    for (const cookie of await owner.context().cookies()) expect(cookie.value).not.toContain(newPassword);
  });

  it('met no serious or critical accessibility violation, and no script error, on any page', () => {
    const found = accessibility.map(({ page, violation }) => `${page}: ${violation.impact} ${violation.id} (${violation.help}) at ${violation.targets.join(', ')}`);
    expect(found).toEqual([]);
    expect(complaints).toEqual([]);
  });
});
