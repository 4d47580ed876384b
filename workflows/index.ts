// Every workflow the worker registers. Workflow code is deterministic: no I/O, no clocks, no randomness.
export { systemCheck } from './system-check.js';
export { paymentLink } from './payment-link.js';
