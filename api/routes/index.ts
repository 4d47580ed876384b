import type { RouteDef } from '../route.js';
import { listClientChains } from './chains/for-client.js';
import { listChains } from './chains/list.js';
import { cancelPaymentLinkRoute } from './payment-links/cancel.js';
import { createPaymentLinkRoute } from './payment-links/create.js';
import { getPaymentLinkRoute } from './payment-links/get.js';
import { listPaymentLinksRoute } from './payment-links/list.js';
import { simulatePaymentRoute } from './payment-links/simulate.js';
import { getStoreSettingsRoute, updateStoreSettingsRoute } from './store-settings/routes.js';
import { health } from './system/health.js';
import { openapi } from './system/openapi.js';

/** Every API operation, in the order the OpenAPI document lists them. One entry per line. */
export const allRoutes: RouteDef[] = [
  createPaymentLinkRoute,
  listPaymentLinksRoute,
  getPaymentLinkRoute,
  cancelPaymentLinkRoute,
  simulatePaymentRoute,
  getStoreSettingsRoute,
  updateStoreSettingsRoute,
  listChains,
  listClientChains,
  health,
  openapi,
] as unknown as RouteDef[];
