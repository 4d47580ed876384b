import type { DatabasePool } from 'slonik';
import type { Metrics } from '../../domain/metrics.js';
import type { ServiceSettings } from '../../services/settings.js';
import { queryStkPush, type StkQueryResult } from './query-stk-push.js';
import { sendStkPush, type SendStkPushInput, type SendStkPushResult } from './send-stk-push.js';
import { settleStkPrompt, type PromptSettlement } from './settle-prompt.js';

export type { SendStkPushInput, SendStkPushResult } from './send-stk-push.js';
export type { StkQueryResult } from './query-stk-push.js';
export type { PromptSettlement } from './settle-prompt.js';

/**
 * The M-Pesa activities the payment-link workflow runs. Both call Daraja, so the workflow should
 * proxy them with an operator-class policy (see `mobileMoneyActivityOptions` in ./options.ts).
 */
export function createMobileMoneyActivities(deps: { pool: DatabasePool; config: ServiceSettings; metrics?: Metrics }) {
  return {
    /** Sends the STK prompt once per (linkId, attempt); a retry returns the recorded result. */
    async sendStkPush(input: SendStkPushInput): Promise<SendStkPushResult> {
      try {
        const sent = await sendStkPush(deps, input);
        deps.metrics?.stk('push', 'accepted');
        return sent;
      } catch (err) {
        deps.metrics?.stk('push', 'error');
        throw err;
      }
    },
    /**
     * Settles a prompt from evidence (STK query + stored callbacks): what the workflow acts on.
     * Throws when Daraja cannot be asked; the workflow asks again later.
     */
    async settleStkPrompt(input: { linkId: string; checkoutRequestId: string }): Promise<PromptSettlement> {
      try {
        const settled = await settleStkPrompt(deps, input);
        deps.metrics?.stk('settlement', settled.status);
        return settled;
      } catch (err) {
        deps.metrics?.stk('settlement', 'error');
        throw err;
      }
    },
    /** Asks Daraja how a prompt ended. Kept for workflow histories recorded before settleStkPrompt. */
    queryStkPush(input: { linkId: string; checkoutRequestId: string }): Promise<StkQueryResult> {
      return queryStkPush(deps, input);
    },
  };
}

export type MobileMoneyActivities = ReturnType<typeof createMobileMoneyActivities>;
