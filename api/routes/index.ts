import type { RouteDef } from '../route.js';
import { mpesaCallbackRoute } from './callbacks/mpesa.js';
import { c2bConfirmationRoute, c2bValidationRoute, pullNoticeRoute } from './callbacks/c2b.js';
import { assignUnallocatedRoute, listUnallocatedRoute, refundUnallocatedRoute } from './mobile-money/unallocated.js';
import { listClientChains } from './chains/for-client.js';
import { getCheckoutRoute } from './checkout/get.js';
import { checkoutPayMobileMoneyRoute } from './checkout/pay-mobile-money.js';
import { listChains } from './chains/list.js';
import { connectMobileMoneyRoute } from './mobile-money/connect.js';
import { payWithMobileMoneyRoute } from './mobile-money/pay.js';
import { connectSolanaWalletRoute } from './merchant-wallets/connect-solana.js';
import { connectEvmWalletRoute, connectTronWalletRoute } from './merchant-wallets/connect-xpub.js';
import { disconnectEvmWalletRoute, disconnectSolanaWalletRoute, disconnectTronWalletRoute } from './merchant-wallets/disconnect.js';
import { createInvoiceRoute } from './invoices/create.js';
import { getInvoiceRoute } from './invoices/get.js';
import { cancelPaymentLinkRoute } from './payment-links/cancel.js';
import { createPaymentLinkRoute } from './payment-links/create.js';
import { getPaymentLinkRoute } from './payment-links/get.js';
import { listPaymentLinksRoute } from './payment-links/list.js';
import { simulatePaymentRoute } from './payment-links/simulate.js';
import { getStoreSettingsRoute, updateStoreSettingsRoute } from './store-settings/routes.js';
import { health } from './system/health.js';
import { ready } from './system/ready.js';
import { openapi } from './system/openapi.js';
import { derivedWalletBalanceRoute } from './wallets/balance.js';
import { deriveWalletRoute } from './wallets/derive.js';
import { createWebhookEndpoint } from './webhook-endpoints/create.js';
import { deleteWebhookEndpoint } from './webhook-endpoints/delete.js';
import { enableWebhookEndpoint } from './webhook-endpoints/enable.js';
import { getWebhookEndpoint } from './webhook-endpoints/get.js';
import { listWebhookDeliveries } from './webhook-endpoints/list-deliveries.js';
import { listWebhookEndpoints } from './webhook-endpoints/list.js';
import { retryWebhookDelivery } from './webhook-endpoints/retry-delivery.js';
import { rollWebhookEndpointSecret } from './webhook-endpoints/roll-secret.js';
import { sendWebhookTestEvent } from './webhook-endpoints/send-test-event.js';
import { createApiKeyRoute } from './keys/create.js';
import { listApiKeysRoute } from './keys/list.js';
import { revokeApiKeyRoute } from './keys/revoke.js';
import { rollApiKeyRoute } from './keys/roll.js';
import { listReconciliationFindingsRoute } from './reconciliation/list-findings.js';
import { paymentsReportRoute, paymentsReportTotalsRoute } from './reports/payments.js';
import { treasuryBalancesRoute } from './treasury/balances.js';
import { listSweepDestinationsRoute } from './treasury/destinations.js';
import { broadcastSweepPlanRoute, createSweepPlanRoute, getSweepRoute, listSweepsRoute } from './treasury/sweeps.js';

/** Every API operation, in the order the OpenAPI document lists them. One entry per line. */
export const allRoutes: RouteDef[] = [
  createPaymentLinkRoute,
  listPaymentLinksRoute,
  getPaymentLinkRoute,
  cancelPaymentLinkRoute,
  simulatePaymentRoute,
  getCheckoutRoute,
  checkoutPayMobileMoneyRoute,
  createInvoiceRoute,
  getInvoiceRoute,
  connectMobileMoneyRoute,
  payWithMobileMoneyRoute,
  mpesaCallbackRoute,
  c2bValidationRoute,
  c2bConfirmationRoute,
  pullNoticeRoute,
  listUnallocatedRoute,
  assignUnallocatedRoute,
  refundUnallocatedRoute,
  getStoreSettingsRoute,
  updateStoreSettingsRoute,
  createWebhookEndpoint,
  listWebhookEndpoints,
  getWebhookEndpoint,
  deleteWebhookEndpoint,
  enableWebhookEndpoint,
  rollWebhookEndpointSecret,
  listWebhookDeliveries,
  retryWebhookDelivery,
  sendWebhookTestEvent,
  connectTronWalletRoute,
  disconnectTronWalletRoute,
  connectEvmWalletRoute,
  disconnectEvmWalletRoute,
  connectSolanaWalletRoute,
  disconnectSolanaWalletRoute,
  deriveWalletRoute,
  derivedWalletBalanceRoute,
  listChains,
  listClientChains,
  listApiKeysRoute,
  createApiKeyRoute,
  rollApiKeyRoute,
  revokeApiKeyRoute,
  listReconciliationFindingsRoute,
  paymentsReportRoute,
  paymentsReportTotalsRoute,
  treasuryBalancesRoute,
  listSweepDestinationsRoute,
  createSweepPlanRoute,
  broadcastSweepPlanRoute,
  getSweepRoute,
  listSweepsRoute,
  health,
  ready,
  openapi,
] as unknown as RouteDef[];
