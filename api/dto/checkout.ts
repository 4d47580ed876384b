import type { LinkRow } from '../../db/payment-link-repo.js';
import { formatUsdt, parseUsdt } from '../../domain/money.js';
import { railRecord, type RailId } from '../../domain/rails.js';
import { solanaPayUrl } from '../../domain/solana-pay.js';
import type { Config } from '../../runtime/config.js';
import { isSimulatedOnly } from '../../runtime/rail-endpoints.js';

/**
 * What the hosted checkout shows a customer: amounts, where to pay, and the state. Nothing the
 * merchant keeps for itself (merchantRef, metadata, the address index) is in it.
 */
export function checkoutDto(row: LinkRow, storeName: string, config: Pick<Config, 'publicBaseUrl' | 'railOverrides'>) {
  const { publicBaseUrl } = config;
  const usdtAmount = formatUsdt(parseUsdt(row.usdt_amount));
  const addressOf = (rail: RailId): string | null => {
    if (rail === 'USDT_TRON') return row.tron_address;
    if (rail === 'USDT_SOL') return row.solana_address;
    if (rail === 'MOBILE_MONEY') return null;
    return row.evm_address;
  };
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
    // The customer's own M-Pesa receipt (also in their SMS): what a confirmed M-Pesa checkout shows.
    mobileMoneyReceipt: row.confirmed_rail === 'MOBILE_MONEY' ? row.external_id : null,
    redirectUrl: row.redirect_url,
    rails: (row.enabled_rails as RailId[]).map((rail) => {
      const address = addressOf(rail);
      // A simulated-only rail (test mode, no test token) gets no QR code: nothing sent is detected.
      const simulatedOnly = isSimulatedOnly(config, rail, row.environment);
      const payUri = simulatedOnly
        ? null
        : rail === 'USDT_SOL' && row.solana_address && row.solana_reference
          ? solanaPayUrl({ recipient: row.solana_address, amount: usdtAmount, reference: row.solana_reference, label: storeName, linkId: row.id, mint: row.solana_mint ?? undefined })
          : address;
      return {
        ...railRecord(rail, publicBaseUrl),
        ...(simulatedOnly ? { simulatedOnly: true } : {}),
        address,
        payUri,
        qrUrl: payUri ? `${publicBaseUrl}/p/${row.id}/qr/${rail}.svg` : null,
      };
    }),
  };
}

export type CheckoutDto = ReturnType<typeof checkoutDto>;
