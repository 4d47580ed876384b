import type { LinkPaymentRow, LinkRow } from '../../db/payment-link-repo.js';
import { formatUnits, formatUsdt, parseRate, parseUsdt } from '../../domain/money.js';
import type { RailId } from '../../domain/rails.js';
import { solanaPayUrl } from '../../rails/solana/solana-pay.js';
import type { ServiceSettings } from '../settings.js';
import { simulatedOnlyRails } from '../../rails/settings.js';
import { amountUnitOf, paidByPrompt } from '../../rails/methods.js';
import { amountsReceived } from '../../domain/amounts-received.js';

type DtoConfig = Pick<ServiceSettings, 'checkoutBaseUrl' | 'rails'>;

/**
 * Row → API record by allow-list: only the fields named here leave the service. The address
 * index, store id and rate internals never do.
 */
export function paymentLinkDto(row: LinkRow, config: DtoConfig) {
  const rails = row.enabled_rails;
  // Which rails the link offers, read once (no closure per call: under tsx each one is named through
  // a defineProperty, which cost a GET of a link 3 µs).
  const [mobileMoney, tron, bsc, eth, polygon, sol] = [
    rails.includes('MOBILE_MONEY'), rails.includes('USDT_TRON'), rails.includes('USDT_BSC'),
    rails.includes('USDT_ETH'), rails.includes('USDT_POLYGON'), rails.includes('USDT_SOL'),
  ];
  const usdtAmount = formatUsdt(parseUsdt(row.usdt_amount));
  return {
    id: row.id,
    status: row.status,
    environment: row.environment,
    usdtAmount,
    mobileMoneyAmount: mobileMoney ? row.mobile_money_amount : null,
    kesPerUsdt: row.kes_per_usdt === null ? null : formatUnits(parseRate(row.kes_per_usdt), 6),
    enabledRails: rails,
    simulatedOnlyRails: simulatedOnlyRails(config.rails, rails as RailId[], row.environment),
    tronAddress: tron ? row.tron_address : null,
    bscAddress: bsc ? row.evm_address : null,
    ethAddress: eth ? row.evm_address : null,
    polygonAddress: polygon ? row.evm_address : null,
    solanaAddress: sol ? row.solana_address : null,
    solanaReference: sol ? row.solana_reference : null,
    solanaPayUrl:
      // A test link without a mint (Solana simulated only) has no transfer request to offer.
      sol && row.solana_address && row.solana_reference && (row.solana_mint || row.environment === 'live')
        ? solanaPayUrl({ recipient: row.solana_address, amount: usdtAmount, reference: row.solana_reference, label: row.description, linkId: row.id, mint: row.solana_mint ?? undefined })
        : null,
    mobileMoneyShortcode: mobileMoney ? row.mobile_money_shortcode : null,
    mobileMoneyAccountRef: mobileMoney ? row.mobile_money_account_ref : null,
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
    // The unit of `amount`: the rail's (its facts' token symbol: KES on M-Pesa, USDT on chains).
    currency: amountUnitOf(p.rail),
    state: p.state,
    disposition: p.disposition,
    failureReason: p.failure_reason,
    createdAt: p.created_at,
  };
}

/** The single-link fetch: the record plus confirmation fields and every payment seen. */
export function paymentLinkDetailDto(row: LinkRow, payments: LinkPaymentRow[], config: DtoConfig) {
  // The record's fields, then these: assigned onto it, since spreading 25 fields into a new object
  // cost 14 µs a GET (V8's slow path for large spreads), and Object.assign keeps the same order.
  return Object.assign(paymentLinkDto(row, config), {
    confirmedRail: row.confirmed_rail,
    confirmedAt: row.confirmed_at,
    externalId: row.external_id,
    payer: row.payer,
    amountReceived: formatUsdt(BigInt(row.amount_received_minor)),
    amountsReceived: amountsReceived(payments.map((p) => ({ currency: amountUnitOf(p.rail), state: p.state, amountMinor: p.amount_minor, decimals: p.decimals }))),
    simulated: row.simulated,
    mobileMoneyAmountDue: mobileMoneyAmountDue(row, payments),
    payments: payments.map(paymentDto),
  });
}

/**
 * What is still due in whole KES on a link's prompted rail (M-Pesa): its amount less the confirmed
 * prompt-rail payments that counted toward it (partial paybill payments add up). Null without one.
 */
export function mobileMoneyAmountDue(row: LinkRow, payments: readonly LinkPaymentRow[]): number | null {
  if (row.mobile_money_amount === null || !row.enabled_rails.some(paidByPrompt)) return null;
  if (row.status === 'CONFIRMED') return 0;
  const counted = payments
    .filter((p) => p.state === 'confirmed' && paidByPrompt(p.rail) && p.disposition !== 'duplicate' && p.disposition !== 'after_cancel')
    .reduce((sum, p) => sum + BigInt(p.amount_minor ?? '0'), 0n);
  const due = BigInt(row.mobile_money_amount) - counted;
  return due > 0n ? Number(due) : 0;
}
