import type { LinkRow } from '../../db/payment-link-repo.js';
import { formatUsdt, parseUsdt } from '../../domain/money.js';
import type { RailId } from '../../domain/rails.js';
import { methodOf } from '../../rails/methods.js';
import { isRailId, railRecord } from '../../rails/registry.js';
import type { ServiceSettings } from '../settings.js';
import { isSimulatedOnly } from '../../rails/settings.js';
import { railPaymentRequest } from './payment-uri.js';
import type { CheckoutDeposit, CheckoutMobileMoneyAttempt, CheckoutView } from './view.js';

/** What the link's payments add to the page while it is open (services/checkout/progress.ts). */
export interface CheckoutProgress {
  deposit: CheckoutDeposit | null;
  mobileMoney: CheckoutMobileMoneyAttempt | null;
}

/** A link's row as the hosted checkout shows it (see CheckoutView). */
export function checkoutDto(
  row: LinkRow,
  storeName: string,
  config: Pick<ServiceSettings, 'publicBaseUrl' | 'rails'>,
  progress: CheckoutProgress = { deposit: null, mobileMoney: null },
): CheckoutView {
  const { publicBaseUrl } = config;
  const totalMicro = parseUsdt(row.usdt_amount);
  const receivedMicro = BigInt(row.amount_received_minor);
  // Only confirmed payments count; a customer who underpaid is asked for the rest, never less than nothing.
  const dueMicro = receivedMicro > 0n && receivedMicro < totalMicro ? totalMicro - receivedMicro : totalMicro;
  const usdtAmount = formatUsdt(totalMicro);
  const amountDue = formatUsdt(dueMicro);
  // Each wallet slot has one address column on the link (every rail on the EVM key shares the EVM
  // address); a rail with no wallet key (a prompt) has none.
  const addressOf = (rail: RailId): string | null => {
    const slot = methodOf(rail).walletKey?.slot;
    return slot === undefined ? null : { tron: row.tron_address, evm: row.evm_address, solana: row.solana_address }[slot];
  };
  return {
    id: row.id,
    status: row.status,
    environment: row.environment,
    storeName,
    description: row.description,
    usdtAmount,
    amountDue,
    mobileMoneyAmount: row.mobile_money_amount,
    mobileMoneyShortcode: row.mobile_money_shortcode,
    expiresAt: row.expires_at,
    confirmedRail: row.confirmed_rail,
    confirmedAt: row.confirmed_at,
    confirmedReference: row.status === 'CONFIRMED' ? row.external_id : null,
    amountReceived: formatUsdt(receivedMicro),
    // The operator's receipt of a prompted payment (M-Pesa); a chain payment's reference is its tx hash.
    mobileMoneyReceipt: row.confirmed_rail && isRailId(row.confirmed_rail) && methodOf(row.confirmed_rail).receives === 'prompt' ? row.external_id : null,
    redirectUrl: row.redirect_url,
    deposit: progress.deposit,
    mobileMoney: progress.mobileMoney,
    rails: (row.enabled_rails as RailId[]).map((rail) => {
      const address = addressOf(rail);
      // A simulated-only rail (test mode, no test token) gets no QR code: nothing sent is detected.
      const simulatedOnly = isSimulatedOnly(config.rails, rail, row.environment);
      const request =
        simulatedOnly || !address
          ? null
          : railPaymentRequest(config.rails, {
              rail,
              environment: row.environment,
              address,
              amountMicro: dueMicro,
              reference: row.solana_reference ? { reference: row.solana_reference, mint: row.solana_mint, label: storeName, linkId: row.id } : undefined,
            });
      return {
        ...railRecord(rail, publicBaseUrl),
        ...(simulatedOnly ? { simulatedOnly: true as const } : {}),
        address,
        payUri: request?.payUri ?? null,
        walletUri: request?.walletUri ?? null,
        chainId: request?.chainId ?? null,
        tokenContract: request?.tokenContract ?? null,
        // The amount is in the URL so a browser never shows a cached code for an older amount due.
        qrUrl: request ? `${publicBaseUrl}/p/${row.id}/qr/${rail}.svg?amount=${amountDue}` : null,
      };
    }),
  };
}
