// Every workflow the worker registers. Workflow code is deterministic: no I/O, no clocks, no randomness.
export { systemCheck } from './system-check.js';
export { paymentLink } from './payment-link.js';
export { webhookDelivery } from './webhook-delivery.js';
export { webhookOutboxSweeper } from './webhook-outbox-sweeper.js';
export { chainWatcher } from './chain-watcher.js';
export { reconciler } from './reconciler.js';
export { mpesaPull } from './mpesa-pull.js';
export { paymentLink as invoice } from './payment-link.js';
