import type { InvoiceView } from '../../db/invoice-repo.js';
import { formatUsdtFixed, parseUsdt } from '../../domain/money.js';
import { methodOf } from '../../rails/methods.js';
import type { UsdtRail } from '../../domain/rails.js';
import type { LinkStatus } from '../../domain/states.js';
import { railFacts, usdtRails } from '../../rails/registry.js';

export const invoiceNetworks = ['TRON', 'BSC', 'ETH', 'POLYGON', 'SOL'] as const;
export type InvoiceNetwork = (typeof invoiceNetworks)[number];
/** The rail of each invoice network (rails/<family>/facts.ts names them). */
export const railOfNetwork = Object.fromEntries(usdtRails.map((r) => [railFacts[r].network, r])) as Record<InvoiceNetwork, UsdtRail>;

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
function paymentAddressOf(v: InvoiceView, rail: UsdtRail, amount: string): string {
  const method = methodOf(rail);
  // The invoice row's address column of each wallet slot.
  const address = { tron: v.tron_address, evm: v.evm_address, solana: v.solana_address }[method.walletKey!.slot]!;
  if (!method.referenceUri) return address;
  return method.referenceUri({ recipient: address, amount, reference: v.solana_reference!, label: null, linkId: v.id, mint: v.solana_mint ?? undefined });
}

/**
 * The safe invoice shape: exactly the spec's thirteen fields. Nothing of the store leaks but its
 * publishable key (no name, no description, no merchant reference, no other address).
 */
export function invoiceDto(v: InvoiceView) {
  // An invoice has exactly one rail, always a USDT one.
  const rail = v.enabled_rails[0] as UsdtRail;
  const network = railFacts[rail].network as InvoiceNetwork;
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
