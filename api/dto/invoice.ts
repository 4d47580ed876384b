import type { InvoiceView } from '../../db/invoice-repo.js';
import { formatUsdtFixed, parseUsdt } from '../../domain/money.js';
import { solanaPayUrl } from '../../domain/solana-pay.js';
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
 * Where the customer pays. On Solana a bare wallet address cannot identify the payment (every
 * invoice of the store pays the same wallet), so the invoice carries its Solana Pay transfer
 * request instead: `solana:<wallet>?amount=…&spl-token=<mint>&reference=<ref>&memo=<inv_…>`. The
 * reference is what the watcher finds the payment by; nothing in it names the store.
 */
function paymentAddressOf(v: InvoiceView, rail: string, amount: string): string {
  if (rail === 'USDT_TRON') return v.tron_address!;
  if (rail !== 'USDT_SOL') return v.evm_address!;
  return solanaPayUrl({ recipient: v.solana_address!, amount, reference: v.solana_reference!, label: null, linkId: v.id, mint: v.solana_mint ?? undefined });
}

/**
 * The safe invoice shape: exactly the spec's thirteen fields. Nothing of the store leaks but its
 * publishable key (no name, no description, no merchant reference, no other address).
 */
export function invoiceDto(v: InvoiceView) {
  const rail = v.enabled_rails[0]!;
  const network = (Object.keys(railOfNetwork) as InvoiceNetwork[]).find((n) => railOfNetwork[n] === rail)!;
  const amount = formatUsdtFixed(parseUsdt(v.usdt_amount));
  return {
    id: v.id,
    amount,
    token: 'USDT',
    network,
    status: statusOf[v.status],
    paymentAddress: paymentAddressOf(v, rail, amount),
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
