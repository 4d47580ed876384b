// Time to first payment: wall time from spawning `npm run demo` (fresh data directory: PGlite
// initdb, Temporal SQLite, chain deploy) to both demo payments confirmed — one by M-Pesa through
// the checkout page in Chromium, one by the printed USDT command. Target: under 60 s once installed.
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { launchBrowser } from '../test/helpers/browser.js';
import { demoEnv, parseBanner, payByMpesa, runPayCommand, spawnDemo } from '../test/helpers/demo.js';

export async function benchDemo() {
  const dataDir = await mkdtemp(join(tmpdir(), 'malipo-demo-bench-'));
  const browser = await launchBrowser();
  const env = await demoEnv(dataDir);
  const t0 = performance.now();
  const demo = spawnDemo(env);
  try {
    await demo.waitFor('Malipo demo is ready', 180_000);
    const readyMs = performance.now() - t0;
    const banner = parseBanner(demo.output());
    let mpesaMs = 0;
    let usdtMs = 0;
    await Promise.all([
      payByMpesa(browser, banner).then(() => void (mpesaMs = performance.now() - t0)),
      runPayCommand(banner.payCommand, env).then(() => void (usdtMs = performance.now() - t0)),
    ]);
    const totalMs = performance.now() - t0;
    return { readyMs: Math.round(readyMs), mpesaConfirmedMs: Math.round(mpesaMs), usdtConfirmedMs: Math.round(usdtMs), bothConfirmedMs: Math.round(totalMs) };
  } finally {
    await demo.stop();
    await browser.close();
    await rm(dataDir, { recursive: true, force: true });
  }
}
