import { WorkflowIdReusePolicy, WorkflowUpdateFailedError, type WorkflowHandle } from '@temporalio/client';
import { ApplicationFailure } from '@temporalio/common';
import { sql } from 'slonik';
import { z } from 'zod';
import { allocateAddressIndex, deleteLink, findLink, insertLink, listLinkPayments, type LinkRow } from '../../db/payment-link-repo.js';
import { findStoreConnections, findStorePolicy, findWalletKeys } from '../../db/store-repo.js';
import { deriveAddress, linkBranch } from '../../domain/hd/derive.js';
import { AppError, notFound } from '../../domain/errors.js';
import { formatUsdt, kesToUsdtMicro, parseUsdt, usdtToKes } from '../../domain/money.js';
import { availableRails, rails, type RailId, type RailRequirement } from '../../domain/rails.js';
import { newId } from '../../domain/ids.js';
import { newSolanaReference } from '../../domain/solana-pay.js';
import { searchAttributes } from '../../domain/search-attributes.js';
import { taskQueueName } from '../../domain/task-queues.js';
import { paymentLinkWorkflowId, type PaymentLinkInput } from '../../workflows/payment-link-contract.js';
import type { paymentLink } from '../../workflows/payment-link.js';
import { paymentLinkDetailDto, paymentLinkDto } from '../dto/payment-link.js';
import type { ApiDeps } from '../deps.js';
import { ensureChainWatchers } from './chain-watchers.js';
import type { AuthContext } from '../plugins/auth.js';

const zShortcode = z.object({ shortcode: z.string() });

export interface CreateLinkInput {
  usdtAmount?: string;
  mobileMoneyAmount?: number;
  enabledRails: RailId[];
  description?: string;
  merchantRef?: string;
  metadata?: Record<string, unknown>;
  expiresInMinutes: number;
  redirectUrl?: string;
}

const howToConnect: Record<RailRequirement, string> = {
  mobile_money: 'connect an M-Pesa paybill or till (POST /v1/merchant/clients/:clientId/mobile-money/connect)',
  tron_xpub: 'register a TRON account xpub (PUT /v1/merchant/clients/:clientId/wallets/tron)',
  evm_xpub: 'register an EVM account xpub (PUT /v1/merchant/clients/:clientId/wallets/evm)',
  solana_wallet: 'connect a Solana wallet (PUT /v1/merchant/clients/:clientId/wallets/solana)',
};

/** Amounts of a new link: USDT due, KES shown, and the rate that links them (locked for the link's life). */
async function resolveAmounts(deps: ApiDeps, auth: AuthContext, input: CreateLinkInput) {
  const mobile = input.enabledRails.includes('MOBILE_MONEY');
  const mobileOnly = mobile && input.enabledRails.length === 1;
  if (input.usdtAmount === undefined && !mobileOnly) {
    throw new AppError('missing_field', "Missing required field 'usdtAmount': it is required unless MOBILE_MONEY is the only rail.", 'usdtAmount');
  }
  if (input.usdtAmount === undefined && input.mobileMoneyAmount === undefined) {
    throw new AppError('missing_field', "A mobile-money-only link needs 'mobileMoneyAmount' (KES) or 'usdtAmount'.", 'mobileMoneyAmount');
  }
  const needsRate = mobile && (input.mobileMoneyAmount === undefined || input.usdtAmount === undefined);
  const rate = needsRate || mobile ? await deps.rates.kesPerUsdt(auth.environment) : null;
  const usdtMicro = input.usdtAmount !== undefined ? parseUsdt(input.usdtAmount) : kesToUsdtMicro(input.mobileMoneyAmount!, rate!.kesPerUsdt);
  let kes: number | null = null;
  if (mobile) {
    kes = input.mobileMoneyAmount ?? usdtToKes(usdtMicro, rate!.kesPerUsdt);
    if (kes > 250_000) {
      throw new AppError('invalid_field', `The KES amount ${kes} is above M-Pesa's limit of 250000 per transaction.`, input.mobileMoneyAmount === undefined ? 'usdtAmount' : 'mobileMoneyAmount');
    }
  }
  return { usdtMicro, kes, rate };
}

/**
 * Creates a payment link: checks rail availability, fixes amounts, takes addresses from the
 * link branch, writes the read model and starts the link's workflow. If the workflow cannot be
 * started the row is removed again, so no link exists without the workflow that owns it.
 */
export async function createPaymentLink(deps: ApiDeps, auth: AuthContext, input: CreateLinkInput) {
  const connections = await findStoreConnections(deps.pool, auth.storeId, auth.environment);
  const available = availableRails(connections);
  for (const rail of input.enabledRails) {
    if (!available.includes(rail)) {
      throw new AppError('rail_not_available', `${rail} is not available for this store in ${auth.environment}: ${howToConnect[rails[rail].requires]}.`, 'enabledRails');
    }
  }
  const { usdtMicro, kes, rate } = await resolveAmounts(deps, auth, input);
  const policy = await findStorePolicy(deps.pool, auth.storeId, auth.environment);
  const has = (r: RailId) => input.enabledRails.includes(r);
  const needsEvm = has('USDT_BSC') || has('USDT_ETH') || has('USDT_POLYGON');
  const id = newId('paymentLink');
  const nowMs = Date.now();
  const expiresAtMs = nowMs + input.expiresInMinutes * 60_000;

  const row = await deps.pool.transaction(async (tx) => {
    const keys = await findWalletKeys(tx, auth.storeId, auth.environment);
    const index = has('USDT_TRON') || needsEvm ? await allocateAddressIndex(tx, auth.storeId, auth.environment) : null;
    const shortcode = has('MOBILE_MONEY')
      ? await tx.maybeOneFirst(sql.type(zShortcode)`SELECT shortcode FROM mobile_money_connections WHERE store_id = ${auth.storeId} AND environment = ${auth.environment}`)
      : null;
    return insertLink(tx, {
      id,
      storeId: auth.storeId,
      environment: auth.environment,
      usdtAmount: formatUsdt(usdtMicro),
      mobileMoneyAmount: kes,
      kesPerUsdt: rate?.kesPerUsdt ?? null,
      rateSource: rate?.source ?? null,
      enabledRails: input.enabledRails,
      addressIndex: index,
      tronAddress: has('USDT_TRON') ? deriveAddress(keys.tron!, 'tron', linkBranch, index!) : null,
      evmAddress: needsEvm ? deriveAddress(keys.evm!, 'evm', linkBranch, index!) : null,
      solanaAddress: has('USDT_SOL') ? keys.solana : null,
      solanaReference: has('USDT_SOL') ? newSolanaReference() : null,
      mobileMoneyShortcode: shortcode ?? null,
      description: input.description ?? null,
      merchantRef: input.merchantRef ?? null,
      metadata: input.metadata ?? null,
      redirectUrl: input.redirectUrl ?? null,
      expiresAt: new Date(expiresAtMs).toISOString(),
      watchUntil: new Date(expiresAtMs + policy.lateWatchMinutes * 60_000).toISOString(),
    });
  });

  const workflowInput: PaymentLinkInput = {
    linkId: id,
    storeId: auth.storeId,
    environment: auth.environment,
    enabledRails: input.enabledRails,
    usdtAmountMicro: String(usdtMicro),
    mobileMoneyAmount: kes,
    merchantRef: input.merchantRef ?? null,
    expiresAtMs: Date.parse(row.expires_at),
    lateWatchMinutes: policy.lateWatchMinutes,
    underpaymentToleranceBps: policy.underpaymentToleranceBps,
    webhookTaskQueue: taskQueueName(deps.config.temporal.taskQueuePrefix, 'webhooks'),
  };
  try {
    await ensureChainWatchers(deps.temporal, deps.config, input.enabledRails, auth.environment);
    await deps.temporal.workflow.start<typeof paymentLink>('paymentLink', {
      workflowId: paymentLinkWorkflowId(id),
      taskQueue: taskQueueName(deps.config.temporal.taskQueuePrefix, 'payments'),
      args: [workflowInput],
      workflowIdReusePolicy: WorkflowIdReusePolicy.REJECT_DUPLICATE,
      typedSearchAttributes: [
        { key: searchAttributes.status, value: 'PENDING' },
        { key: searchAttributes.store, value: auth.storeId },
        { key: searchAttributes.environment, value: auth.environment },
        ...(input.merchantRef ? [{ key: searchAttributes.merchantRef, value: input.merchantRef.slice(0, 200) }] : []),
      ],
    });
  } catch (err) {
    await deleteLink(deps.pool, id).catch(() => undefined);
    deps.logger?.error({ err, linkId: id }, 'could not start the payment-link workflow');
    throw new AppError('upstream_unavailable', 'The payment engine is unavailable; the link was not created. Retry with the same Idempotency-Key.');
  }
  return paymentLinkDto(row, deps.config.checkoutBaseUrl);
}


export async function getPaymentLink(deps: ApiDeps, auth: AuthContext, id: string) {
  const row = await findLink(deps.pool, auth.storeId, auth.environment, id);
  if (!row) throw notFound('payment link');
  return paymentLinkDetailDto(row, await listLinkPayments(deps.pool, id), deps.config.checkoutBaseUrl);
}

export async function requireLink(deps: ApiDeps, auth: AuthContext, id: string): Promise<LinkRow> {
  const row = await findLink(deps.pool, auth.storeId, auth.environment, id);
  if (!row) throw notFound('payment link');
  return row;
}

/** How a rejected workflow update reads as an API error (validators name the reason in `type`). */
const updateFailureCodes: Record<string, ConstructorParameters<typeof AppError>[0]> = {
  invalid_state: 'invalid_state',
  rail_not_enabled: 'invalid_field',
  MpesaRejected: 'invalid_field',
};

/**
 * Runs an update on the link's workflow after checking in the read model that the link belongs
 * to the caller's store (another store's link is a 404, never a 409).
 */
export async function executeLinkUpdate<Ret>(
  deps: ApiDeps,
  auth: AuthContext,
  linkId: string,
  run: (handle: WorkflowHandle) => Promise<Ret>,
): Promise<Ret> {
  await requireLink(deps, auth, linkId);
  try {
    return await run(deps.temporal.workflow.getHandle(paymentLinkWorkflowId(linkId)));
  } catch (err) {
    const cause = err instanceof WorkflowUpdateFailedError ? err.cause : undefined;
    if (cause instanceof ApplicationFailure && cause.type && updateFailureCodes[cause.type]) {
      const message = cause.message.replace(/^\w+: /, '');
      throw new AppError(updateFailureCodes[cause.type]!, message, cause.type === 'rail_not_enabled' ? 'rail' : undefined);
    }
    deps.logger?.error({ err, linkId }, 'payment-link update failed');
    throw new AppError('upstream_failed', 'The payment engine could not complete the request; nothing was charged. Retry shortly.');
  }
}
