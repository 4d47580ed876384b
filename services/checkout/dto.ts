import type { LinkRow } from '../../db/payment-link-repo.js';
import { formatUsdt, parseUsdt } from '../../domain/money.js';
import { type RailId } from '../../domain/rails.js';
import { railFacts, railRecord } from '../../rails/registry.js';
import { solanaPayUrl } from '../../domain/solana-pay.js';
import type { ServiceSettings } from '../settings.js';
import { isSimulatedOnly } from '../../rails/settings.js';
import type { CheckoutView } from './view.js';

/** A link's row as the hosted checkout shows it (see CheckoutView). */
export function checkoutDto(row: LinkRow, storeName: string, config: Pick<ServiceSettings, 'publicBaseUrl' | 'rails'>): CheckoutView {
  const { publicBaseUrl } = config;
  const usdtAmount = formatUsdt(parseUsdt(row.usdt_amount));
  // Each adapter family has one address column on the link (every EVM rail shares the EVM address).
  const addressOf = (rail: RailId): string | null =>
    ({ tron: row.tron_address, evm: row.evm_address, solana: row.solana_address, mpesa: null })[railFacts[rail].family];
  return {
    id: row.id,
    status: row.status,
    environment: row.environment,
    storeName,
    description: row.description,
    usdtAmount,
    mobileMoneyAmount: row.mobile_money_amount,
    mobileMoneyShortcode: row.mobile_money_shortcode,
    expiresAt: row.expires_at,
    confirmedRail: row.confirmed_rail,
    confirmedAt: row.confirmed_at,
    amountReceived: formatUsdt(BigInt(row.amount_received_minor)),
    mobileMoneyReceipt: row.confirmed_rail === 'MOBILE_MONEY' ? row.external_id : null,
    redirectUrl: row.redirect_url,
    rails: (row.enabled_rails as RailId[]).map((rail) => {
      const address = addressOf(rail);
      // A simulated-only rail (test mode, no test token) gets no QR code: nothing sent is detected.
      const simulatedOnly = isSimulatedOnly(config.rails, rail, row.environment);
      const payUri = simulatedOnly
        ? null
        : railFacts[rail].family === 'solana' && row.solana_address && row.solana_reference
          ? solanaPayUrl({ recipient: row.solana_address, amount: usdtAmount, reference: row.solana_reference, label: storeName, linkId: row.id, mint: row.solana_mint ?? undefined })
          : address;
      return {
        ...railRecord(rail, publicBaseUrl),
        ...(simulatedOnly ? { simulatedOnly: true as const } : {}),
        address,
        payUri,
        qrUrl: payUri ? `${publicBaseUrl}/p/${row.id}/qr/${rail}.svg` : null,
      };
    }),
  };
}
