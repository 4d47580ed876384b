import type { ActivityDeps } from './deps.js';
import { createChainActivities } from './chains/index.js';
import { createLinkActivities } from './links/index.js';
import { createMobileMoneyActivities } from './mpesa/index.js';
import { createReconciliationActivities } from './reconciliation/index.js';
import { createMpesaPullActivities } from './mpesa-pull/index.js';
import { createSystemActivities } from './system/index.js';
import { createWebhookActivities } from './webhooks/index.js';

export type { ActivityDeps } from './deps.js';

/** The worker registers what this returns; tests call it with real parts. */
export function createActivities(deps: ActivityDeps) {
  return {
    ...createSystemActivities(deps),
    ...createLinkActivities(deps),
    ...createChainActivities(deps),
    ...createWebhookActivities(deps),
    ...createMobileMoneyActivities(deps),
    ...createReconciliationActivities(deps),
    ...createMpesaPullActivities(deps),
  };
}

export type Activities = ReturnType<typeof createActivities>;
