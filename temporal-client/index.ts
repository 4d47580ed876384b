/**
 * The one way into Temporal for everything but workflow code: workflow starts, signals and
 * updates, their ids, types, task queues and search attributes, and how a failed update reads
 * as an API error. The API, the dashboard, the CLI and activities call these; workflows never
 * import this module (they share only domain/workflow-contract.ts with it).
 */
export { queueOf, targetOf, type TemporalTarget } from './target.js';
export { ensureChainWatcher, ensureOutboxSweeper, ensureMpesaPullWorkflow, ensureReconcilerWorkflow, runManualDelivery, startDelivery, startPaymentRequest } from './starts.js';
export { cancelPaymentLink, promptMobileMoney, simulateLinkPayment, tellDeposit, tellMobileMoneyCallback } from './link-messages.js';
export { updateFailureToAppError, type LinkUpdate } from './update-failures.js';
