import type { LinkPaymentRow, LinkRow } from '../../db/payment-link-repo.js';
import { formatUnits, formatUsdt, parseRate, parseUsdt } from '../../domain/money.js';
import type { RailId } from '../../domain/rails.js';
import { solanaPayUrl } from '../../domain/solana-pay.js';
import type { ServiceSettings } from '../settings.js';
import { simulatedOnlyRails } from '../../rails/settings.js';

type DtoConfig = Pick<ServiceSettings, 'checkoutBaseUrl' | 'rails'>;

/**
 * Row → API record by allow-list: only the fields named here leave the service. The address
 * index, store id and rate internals never do.
 */
export function paymentLinkDto(row: LinkRow, config: DtoConfig) {
  const rails = row.enabled_rails;
  const has = (r: string) => rails.includes(r);
  const usdtAmount = formatUsdt(parseUsdt(row.usdt_amount));
  return {
    id: row.id,
    status: row.status,
    environment: row.environment,
    usdtAmount,
    mobileMoneyAmount: has('MOBILE_MONEY') ? row.mobile_money_amount : null,
    kesPerUsdt: row.kes_per_usdt === null ? null : formatUnits(parseRate(row.kes_per_usdt), 6),
    enabledRails: rails,
    simulatedOnlyRails: simulatedOnlyRails(config.rails, rails as RailId[], row.environment),
    tronAddress: has('USDT_TRON') ? row.tron_address : null,
    bscAddress: has('USDT_BSC') ? row.evm_address : null,
    ethAddress: has('USDT_ETH') ? row.evm_address : null,
    polygonAddress: has('USDT_POLYGON') ? row.evm_address : null,
    solanaAddress: has('USDT_SOL') ? row.solana_address : null,
    solanaReference: has('USDT_SOL') ? row.solana_reference : null,
    solanaPayUrl:
      // A test link without a mint (Solana simulated only) has no transfer request to offer.
      has('USDT_SOL') && row.solana_address && row.solana_reference && (row.solana_mint || row.environment === 'live')
        ? solanaPayUrl({ recipient: row.solana_address, amount: usdtAmount, reference: row.solana_reference, label: row.description, linkId: row.id, mint: row.solana_mint ?? undefined })
        : null,
    mobileMoneyShortcode: has('MOBILE_MONEY') ? row.mobile_money_shortcode : null,
    description: row.description,
    merchantRef: row.merchant_ref,
    metadata: row.metadata ?? null,
    redirectUrl: row.redirect_url,
    expiresAt: row.expires_at,
    createdAt: row.created_at,
    checkoutUrl: `${config.checkoutBaseUrl}/p/${row.id}`,
  };
}

export type PaymentLinkDto = ReturnType<typeof paymentLinkDto>;

function paymentDto(p: LinkPaymentRow) {
  return {
    rail: p.rail,
    externalId: p.external_id,
    payer: p.payer,
    amount: p.amount_minor === null || p.decimals === null ? null : formatUnits(BigInt(p.amount_minor), p.decimals),
    state: p.state,
    disposition: p.disposition,
    failureReason: p.failure_reason,
    createdAt: p.created_at,
  };
}

/** The single-link fetch: the record plus confirmation fields and every payment seen. */
export function paymentLinkDetailDto(row: LinkRow, payments: LinkPaymentRow[], config: DtoConfig) {
  return {
    ...paymentLinkDto(row, config),
    confirmedRail: row.confirmed_rail,
    confirmedAt: row.confirmed_at,
    externalId: row.external_id,
    payer: row.payer,
    amountReceived: formatUsdt(BigInt(row.amount_received_minor)),
    simulated: row.simulated,
    payments: payments.map(paymentDto),
  };
}
