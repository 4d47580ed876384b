import { existsSync } from 'node:fs';
import { chromium, type Browser } from 'playwright-core';

/** Debian's Chromium (never a downloaded browser), with the flags this closed network needs. */
export const chromiumPath = process.env.CHROMIUM_PATH ?? '/usr/bin/chromium';

export async function launchBrowser(): Promise<Browser> {
  if (!existsSync(chromiumPath)) throw new Error(`Chromium is missing at ${chromiumPath}: apt-get install chromium`);
  return chromium.launch({
    executablePath: chromiumPath,
    headless: true,
    args: ['--no-sandbox', '--disable-gpu', '--disable-quic', '--no-first-run', '--disable-background-networking', '--disable-component-update', '--disable-sync'],
  });
}

export { freePort } from './ports.js';

// ---- Checkout browser tests: viewports, accessibility checks, screenshots and QR reading. ----
import { mkdirSync, readFileSync } from 'node:fs';
import { createRequire } from 'node:module';
import { dirname, join } from 'node:path';
import type { BrowserContextOptions, Page } from 'playwright-core';
import jsQRModule from 'jsqr';
import { PNG } from 'pngjs';

// jsqr is CommonJS with a `default` beside itself; its types describe only the ES default.
const jsQR = ((jsQRModule as unknown as { default?: unknown }).default ?? jsQRModule) as unknown as typeof jsQRModule.default;

/** A cheap Android phone (360×740 CSS px at 2×) and an ordinary laptop. */
export const phone: BrowserContextOptions = { viewport: { width: 360, height: 740 }, deviceScaleFactor: 2, isMobile: true, hasTouch: true };
export const desktop: BrowserContextOptions = { viewport: { width: 1280, height: 800 } };

const axeSource = readFileSync(createRequire(import.meta.url).resolve('axe-core/axe.min.js'), 'utf8');

export interface AxeViolation {
  id: string;
  impact: string | null;
  help: string;
  targets: string[];
}

/**
 * Runs axe-core (WCAG 2.1 A and AA, and best practices) on the page as it is now. The context
 * must be made with `bypassCSP: true`: pages allow only their own scripts, and axe is injected.
 */
export async function axeViolations(page: Page): Promise<AxeViolation[]> {
  if (!(await page.evaluate(() => 'axe' in window))) await page.addScriptTag({ content: axeSource });
  return page.evaluate(async () => {
    const axe = (window as unknown as { axe: { run(o: unknown): Promise<{ violations: { id: string; impact: string | null; help: string; nodes: { target: string[] }[] }[] }> } }).axe;
    const result = await axe.run({ runOnly: { type: 'tag', values: ['wcag2a', 'wcag2aa', 'wcag21a', 'wcag21aa', 'best-practice'] } });
    return result.violations.map((v) => ({ id: v.id, impact: v.impact, help: v.help, targets: v.nodes.map((n) => n.target.join(' ')) }));
  });
}

/**
 * Clicks a rail at checkout and waits for its panel: with JavaScript the page fetches the panel and
 * swaps it in (the chosen rail then carries aria-current); without, the click is a navigation.
 * Reading right after the click would read the panel the click is about to replace.
 */
export async function chooseRail(page: Page, rail: string): Promise<void> {
  await page.click(`[data-rail="${rail}"]`);
  await page.locator(`[data-rail="${rail}"][aria-current="true"]`).waitFor();
}

/** Saves a full-page screenshot under artifacts/ (gitignored) for a person to look at. */
export async function saveScreenshot(page: Page, path: string): Promise<void> {
  const file = join(process.cwd(), 'artifacts', path);
  mkdirSync(dirname(file), { recursive: true });
  await page.screenshot({ path: file, fullPage: true });
}

/** The text of the QR code in a PNG (a screenshot of the rendered image), or null. */
export function decodeQrPng(png: Buffer): string | null {
  const image = PNG.sync.read(png);
  return jsQR(new Uint8ClampedArray(image.data), image.width, image.height)?.data ?? null;
}
