import { WorkflowIdReusePolicy } from '@temporalio/client';
import { sql } from 'slonik';
import { z } from 'zod';
import { allocateAddressIndex, deleteLink, insertLink, type LinkRow } from '../../db/payment-link-repo.js';
import { findStoreConnections, findStorePolicy, findWalletKeys } from '../../db/store-repo.js';
import { AppError } from '../../domain/errors.js';
import { deriveAddress, linkBranch } from '../../domain/hd/derive.js';
import { formatUsdt } from '../../domain/money.js';
import { availableRails, rails as railSpecs, type RailId, type RailRequirement } from '../../domain/rails.js';
import { searchAttributes } from '../../domain/search-attributes.js';
import { newSolanaReference } from '../../domain/solana-pay.js';
import { taskQueueName } from '../../domain/task-queues.js';
import { requestWorkflowId, type PaymentLinkInput } from '../../workflows/payment-link-contract.js';
import type { paymentLink } from '../../workflows/payment-link.js';
import type { Rate } from '../../activities/rates/rate-service.js';
import type { ApiDeps } from '../deps.js';
import type { AuthContext } from '../plugins/auth.js';
import { railEndpoint } from '../../runtime/rail-endpoints.js';
import { ensureChainWatchers } from './chain-watchers.js';

/**
 * What payment links and invoices share: rail availability, address allocation on the link
 * branch, the read-model row and the workflow that owns it.
 */
const howToConnect: Record<RailRequirement, string> = {
  mobile_money: 'connect an M-Pesa paybill or till (POST /v1/merchant/clients/:clientId/mobile-money/connect)',
  tron_xpub: 'register a TRON account xpub (PUT /v1/merchant/clients/:clientId/wallets/tron)',
  evm_xpub: 'register an EVM account xpub (PUT /v1/merchant/clients/:clientId/wallets/evm)',
  solana_wallet: 'connect a Solana wallet (PUT /v1/merchant/clients/:clientId/wallets/solana)',
};

export async function assertRailsAvailable(deps: ApiDeps, auth: AuthContext, wanted: readonly RailId[], param: string): Promise<void> {
  const available = availableRails(await findStoreConnections(deps.pool, auth.storeId, auth.environment));
  for (const rail of wanted) {
    if (!available.includes(rail)) {
      throw new AppError('rail_not_available', `${rail} is not available for this store in ${auth.environment}: ${howToConnect[railSpecs[rail].requires]}.`, param);
    }
  }
}

const zShortcode = z.object({ shortcode: z.string() });

export interface PaymentRequestSpec {
  kind: 'payment_link' | 'invoice';
  id: string;
  rails: RailId[];
  usdtMicro: bigint;
  kes: number | null;
  rate: Rate | null;
  description: string | null;
  merchantRef: string | null;
  metadata: Record<string, unknown> | null;
  redirectUrl: string | null;
  expiresInMinutes: number;
}

/**
 * Takes addresses from the link branch, writes the read model and starts the workflow. If the
 * workflow cannot be started the row is removed again, so no request exists without the
 * workflow that owns it.
 */
export async function openPaymentRequest(deps: ApiDeps, auth: AuthContext, spec: PaymentRequestSpec): Promise<LinkRow> {
  const policy = await findStorePolicy(deps.pool, auth.storeId, auth.environment);
  const has = (r: RailId) => spec.rails.includes(r);
  const needsEvm = has('USDT_BSC') || has('USDT_ETH') || has('USDT_POLYGON');
  const expiresAtMs = Date.now() + spec.expiresInMinutes * 60_000;
  for (const rail of spec.rails) {
    if (rail === 'MOBILE_MONEY' || railEndpoint(deps.config, rail, auth.environment).usdtContract) continue;
    // Without a token contract (or mint) the watcher cannot recognise the payment: refuse rather than lose it.
    throw new AppError('rail_not_available', `${rail} has no USDT contract configured for ${auth.environment}; the operator must set USDT_CONTRACT_${rail}_${auth.environment.toUpperCase()}.`, spec.kind === 'invoice' ? 'network' : 'enabledRails');
  }
  const solanaMint = has('USDT_SOL') ? railEndpoint(deps.config, 'USDT_SOL', auth.environment).usdtContract! : null;

  const row = await deps.pool.transaction(async (tx) => {
    const keys = await findWalletKeys(tx, auth.storeId, auth.environment);
    const index = has('USDT_TRON') || needsEvm ? await allocateAddressIndex(tx, auth.storeId, auth.environment) : null;
    const shortcode = has('MOBILE_MONEY')
      ? await tx.maybeOneFirst(sql.type(zShortcode)`SELECT shortcode FROM mobile_money_connections WHERE store_id = ${auth.storeId} AND environment = ${auth.environment}`)
      : null;
    return insertLink(tx, {
      id: spec.id,
      kind: spec.kind,
      storeId: auth.storeId,
      environment: auth.environment,
      usdtAmount: formatUsdt(spec.usdtMicro),
      mobileMoneyAmount: spec.kes,
      kesPerUsdt: spec.rate?.kesPerUsdt ?? null,
      rateSource: spec.rate?.source ?? null,
      enabledRails: spec.rails,
      addressIndex: index,
      tronAddress: has('USDT_TRON') ? deriveAddress(keys.tron!, 'tron', linkBranch, index!) : null,
      evmAddress: needsEvm ? deriveAddress(keys.evm!, 'evm', linkBranch, index!) : null,
      solanaAddress: has('USDT_SOL') ? keys.solana : null,
      solanaReference: has('USDT_SOL') ? newSolanaReference() : null,
      solanaMint,
      mobileMoneyShortcode: shortcode ?? null,
      description: spec.description,
      merchantRef: spec.merchantRef,
      metadata: spec.metadata,
      redirectUrl: spec.redirectUrl,
      expiresAt: new Date(expiresAtMs).toISOString(),
      watchUntil: new Date(expiresAtMs + policy.lateWatchMinutes * 60_000).toISOString(),
    });
  });

  const workflowInput: PaymentLinkInput = {
    linkId: spec.id,
    storeId: auth.storeId,
    environment: auth.environment,
    enabledRails: spec.rails,
    usdtAmountMicro: String(spec.usdtMicro),
    mobileMoneyAmount: spec.kes,
    merchantRef: spec.merchantRef,
    expiresAtMs: Date.parse(row.expires_at),
    lateWatchMinutes: policy.lateWatchMinutes,
    underpaymentToleranceBps: policy.underpaymentToleranceBps,
    webhookTaskQueue: taskQueueName(deps.config.temporal.taskQueuePrefix, 'webhooks'),
    promptFirstCheckMs: deps.config.mpesaQueryAfterSeconds * 1000,
    historyEventLimit: deps.config.linkHistoryEventLimit,
  };
  try {
    await ensureChainWatchers(deps.temporal, deps.config, spec.rails, auth.environment);
    await deps.temporal.workflow.start<typeof paymentLink>(spec.kind === 'invoice' ? 'invoice' : 'paymentLink', {
      workflowId: requestWorkflowId(spec.kind, spec.id),
      taskQueue: taskQueueName(deps.config.temporal.taskQueuePrefix, 'payments'),
      args: [workflowInput],
      workflowIdReusePolicy: WorkflowIdReusePolicy.REJECT_DUPLICATE,
      typedSearchAttributes: [
        { key: searchAttributes.status, value: 'PENDING' },
        { key: searchAttributes.store, value: auth.storeId },
        { key: searchAttributes.environment, value: auth.environment },
        ...(spec.merchantRef ? [{ key: searchAttributes.merchantRef, value: spec.merchantRef.slice(0, 200) }] : []),
      ],
    });
  } catch (err) {
    await deleteLink(deps.pool, spec.id).catch(() => undefined);
    deps.logger?.error({ err, id: spec.id }, 'could not start the payment workflow');
    throw new AppError('upstream_unavailable', 'The payment engine is unavailable; nothing was created. Retry with the same Idempotency-Key.');
  }
  return row;
}
