import type { Address } from 'viem';
import { demoRailDecimals, sendDemoUsdt, type DemoEvmRail } from './chain.js';
import { sandboxPaybill, sandboxTestPhone } from '../emulators/daraja/sandbox.js';
import { apiClient } from './demo.js';
import { demoDataDir, readDemoState } from './state.js';

const addressField: Record<DemoEvmRail, string> = { USDT_BSC: 'bscAddress', USDT_ETH: 'ethAddress', USDT_POLYGON: 'polygonAddress' };

/** `npm run demo:pay -- <linkId> [--rail USDT_BSC] [--data-dir DIR]`: pays a demo link's exact amount on the demo chain. */
export async function demoPay(linkId: string, opts: { rail?: string; dataDir?: string }): Promise<void> {
  const dataDir = opts.dataDir ? demoDataDir({ DATA_DIR: opts.dataDir }) : demoDataDir();
  const state = await readDemoState(dataDir);
  if (!state.testKeys || !state.anvilUrl || !state.tokens || !state.payer || !state.apiUrl) {
    throw new Error(`no running demo found in ${dataDir}: start it with npm run demo (or pass --data-dir)`);
  }
  const rail = (opts.rail ?? 'USDT_BSC') as DemoEvmRail;
  if (!(rail in addressField)) throw new Error('--rail must be USDT_BSC, USDT_ETH or USDT_POLYGON');
  const api = apiClient(state.apiUrl);
  const key = state.testKeys.secretKey;
  const link = await api.call('GET', `/v1/payment-links/${encodeURIComponent(linkId)}`, key) as Record<string, string | null>;
  const to = link[addressField[rail]];
  if (!to) throw new Error(`${linkId} does not take ${rail}`);
  if (link.status !== 'PENDING') throw new Error(`${linkId} is ${link.status}, not PENDING`);
  const amountMinor = toMinor(link.usdtAmount!, demoRailDecimals[rail]);
  const hash = await sendDemoUsdt(state.anvilUrl, state.tokens[rail] as Address, state.payer as Address, to as Address, amountMinor);
  console.log(`Sent ${link.usdtAmount} USDT on ${rail} to ${to}: ${hash}`);
  await untilConfirmed(api, key, linkId);
}

/**
 * `npm run demo:pay -- --paybill <linkId>`: a customer pays the link from the M-Pesa menu (Paybill →
 * business number → the link's account reference → the amount still due), through the Daraja
 * emulator's C2B Simulate; its confirmation reaches the service's registered URL.
 */
export async function demoPayPaybill(linkId: string, opts: { dataDir?: string }): Promise<void> {
  const dataDir = opts.dataDir ? demoDataDir({ DATA_DIR: opts.dataDir }) : demoDataDir();
  const state = await readDemoState(dataDir);
  if (!state.testKeys || !state.apiUrl || !state.darajaUrl) throw new Error(`no running demo found in ${dataDir}: start it with npm run demo (or pass --data-dir)`);
  const api = apiClient(state.apiUrl);
  const key = state.testKeys.secretKey;
  const link = await api.call('GET', `/v1/payment-links/${encodeURIComponent(linkId)}`, key) as Record<string, string | number | null>;
  const ref = link.mobileMoneyAccountRef;
  const due = link.mobileMoneyAmountDue ?? link.mobileMoneyAmount;
  if (typeof ref !== 'string' || due === null || due === undefined) throw new Error(`${linkId} does not take M-Pesa`);
  if (link.status !== 'PENDING') throw new Error(`${linkId} is ${link.status}, not PENDING`);
  const paybill = sandboxPaybill('demo');
  const basic = Buffer.from(`${paybill.consumerKey}:${paybill.consumerSecret}`).toString('base64');
  const oauth = await fetch(`${state.darajaUrl}/oauth/v1/generate?grant_type=client_credentials`, { headers: { authorization: `Basic ${basic}` } });
  const token = ((await oauth.json()) as { access_token?: string }).access_token;
  if (!token) throw new Error('the Daraja emulator refused the demo app');
  const simulate = await fetch(`${state.darajaUrl}/mpesa/c2b/v1/simulate`, {
    method: 'POST',
    headers: { authorization: `Bearer ${token}`, 'content-type': 'application/json' },
    body: JSON.stringify({ ShortCode: paybill.shortCode, CommandID: 'CustomerPayBillOnline', Amount: String(due), Msisdn: sandboxTestPhone, BillRefNumber: ref }),
  });
  if (!simulate.ok) throw new Error(`C2B simulate refused: ${await simulate.text()}`);
  console.log(`Paid KES ${due} to paybill ${paybill.shortCode}, account ${ref}`);
  await untilConfirmed(api, key, linkId);
}

/** Polls the link (twice a second, up to a minute) until it reads CONFIRMED, and says so. */
async function untilConfirmed(api: ReturnType<typeof apiClient>, key: string, linkId: string): Promise<void> {
  const deadline = Date.now() + 60_000;
  for (;;) {
    const now = await api.call('GET', `/v1/payment-links/${encodeURIComponent(linkId)}`, key) as Record<string, string>;
    if (now.status === 'CONFIRMED') {
      console.log(`${linkId} is CONFIRMED (${now.confirmedRail}, ${now.externalId})`);
      return;
    }
    if (Date.now() > deadline) throw new Error(`${linkId} is still ${now.status} after 60 s`);
    await new Promise((r) => setTimeout(r, 500));
  }
}

function toMinor(amount: string, decimals: number): bigint {
  const [whole, frac = ''] = amount.split('.');
  return BigInt(whole!) * 10n ** BigInt(decimals) + BigInt((frac + '0'.repeat(decimals)).slice(0, decimals) || '0');
}
