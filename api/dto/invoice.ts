import type { InvoiceView } from '../../db/invoice-repo.js';
import { formatUsdtFixed, parseUsdt } from '../../domain/money.js';
import type { LinkStatus } from '../../domain/states.js';

export const invoiceNetworks = ['TRON', 'BSC', 'ETH', 'POLYGON', 'SOL'] as const;
export type InvoiceNetwork = (typeof invoiceNetworks)[number];
export const railOfNetwork = {
  TRON: 'USDT_TRON',
  BSC: 'USDT_BSC',
  ETH: 'USDT_ETH',
  POLYGON: 'USDT_POLYGON',
  SOL: 'USDT_SOL',
} as const satisfies Record<InvoiceNetwork, string>;

/** Invoice statuses: PENDING → CONFIRMING (seen on chain) → PAID (at depth); or EXPIRED. */
export const invoiceStatuses = ['PENDING', 'CONFIRMING', 'PAID', 'EXPIRED', 'CANCELLED'] as const;
const statusOf: Record<LinkStatus, (typeof invoiceStatuses)[number]> = {
  PENDING: 'PENDING',
  PROCESSING: 'CONFIRMING',
  CONFIRMED: 'PAID',
  EXPIRED: 'EXPIRED',
  CANCELLED: 'CANCELLED',
};

/**
 * The safe invoice shape: exactly the spec's thirteen fields. Nothing of the store leaks but its
 * publishable key (no name, no description, no merchant reference, no other address).
 */
export function invoiceDto(v: InvoiceView) {
  const rail = v.enabled_rails[0]!;
  const network = (Object.keys(railOfNetwork) as InvoiceNetwork[]).find((n) => railOfNetwork[n] === rail)!;
  const paymentAddress = rail === 'USDT_TRON' ? v.tron_address : rail === 'USDT_SOL' ? v.solana_address : v.evm_address;
  return {
    id: v.id,
    amount: formatUsdtFixed(parseUsdt(v.usdt_amount)),
    token: 'USDT',
    network,
    status: statusOf[v.status],
    paymentAddress: paymentAddress!,
    expiresAt: v.expires_at,
    txHash: v.tx_hash,
    confirmations: v.confirmations,
    metadata: (v.metadata ?? {}) as Record<string, unknown>,
    simulated: v.simulated,
    environment: v.environment,
    publishableKey: v.publishable_key ?? '',
  };
}

export type InvoiceDto = ReturnType<typeof invoiceDto>;
