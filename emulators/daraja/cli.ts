import { startDarajaEmulator, type EmulatorMerchant } from './server.js';

/** Safaricom's public sandbox shortcode and passkey (research/daraja.md, section 6), plus a demo till. */
export const demoMerchants: EmulatorMerchant[] = [
  {
    consumerKey: 'emulator-consumer-key',
    consumerSecret: 'emulator-consumer-secret',
    shortCode: '174379',
    passkey: 'bfb279f9aa9bdbcf158e97dd71a467cd2e0c893059b10f78e6b72ada1ed2c919',
    kind: 'paybill',
  },
  {
    consumerKey: 'emulator-consumer-key',
    consumerSecret: 'emulator-consumer-secret',
    shortCode: '174380',
    passkey: 'emulator-till-passkey',
    kind: 'till',
    tills: ['174381'],
  },
];

/**
 * `npm run emulator:daraja -- [--port N] [--complete-after-ms MS]`: a local Daraja for the offline
 * demo. Point MPESA_SANDBOX_URL at it; every prompt settles by itself after a few seconds (as the
 * phone script says: success unless POST /_emulator/script says otherwise).
 */
export async function runDarajaEmulator(opts: { port: number; host: string; autoCompleteMs: number }): Promise<void> {
  const emulator = await startDarajaEmulator({ merchants: demoMerchants, port: opts.port, host: opts.host, autoCompleteMs: opts.autoCompleteMs });
  console.log(JSON.stringify({
    url: emulator.url,
    use: `MPESA_SANDBOX_URL=${emulator.url}`,
    paybill: { consumerKey: demoMerchants[0]!.consumerKey, consumerSecret: demoMerchants[0]!.consumerSecret, shortcode: '174379', passkey: demoMerchants[0]!.passkey, environment: 'sandbox' },
    till: { consumerKey: demoMerchants[1]!.consumerKey, consumerSecret: demoMerchants[1]!.consumerSecret, shortcode: '174381', shortcodeType: 'till', storeNumber: '174380', passkey: demoMerchants[1]!.passkey, environment: 'sandbox' },
    promptsSettleAfterMs: opts.autoCompleteMs,
    control: ['GET /_emulator/prompts', 'POST /_emulator/script {phone, result, callback}', 'POST /_emulator/complete {checkoutRequestId, result?}'],
  }, null, 2));
  const stop = () => void emulator.close().then(() => process.exit(0));
  process.on('SIGINT', stop);
  process.on('SIGTERM', stop);
}
