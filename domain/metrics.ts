/**
 * What the product counts, as named events with bounded labels: a rail, an environment, a route
 * pattern, a result code, an outcome. Never a link id, key, phone or address (their number has
 * no bound, and some are personal). The parts record through this interface, handed to them with
 * their dependencies; runtime/metrics.ts implements it with prom-client and serves the text.
 * Pure: a type and a recorder that records nothing.
 */
export type LinkMilestone = 'created' | 'confirmed' | 'expired' | 'cancelled';
export type DepositMilestone = 'seen' | 'confirmed' | 'dropped';
export type ProviderEvent = 'error' | 'disagreement' | 'lag' | 'failover';
/** A webhook attempt's outcome (services/webhooks/attempts.ts). */
export type WebhookOutcome = 'succeeded' | 'failed' | 'endpoint_gone' | 'endpoint_unavailable';

export interface Metrics {
  /** One HTTP answer: the route's pattern (`/v1/payment-links/:id`), never the raw URL; a 429 also counts as a rate-limit refusal. */
  httpRequest(method: string, route: string, statusCode: number, seconds: number): void;
  link(milestone: LinkMilestone, rail: string, environment: string): void;
  /** A link confirmed: seconds since its creation, and since its first evidence when known. */
  linkConfirmedAfter(rail: string, fromCreationSeconds: number, fromEvidenceSeconds?: number): void;
  deposits(milestone: DepositMilestone, rail: string, environment: string, count: number): void;
  /**
   * A watcher's tick: the chain's head and the watcher's cursor, in blocks, and the rail's nominal
   * block time in seconds (rails/<family>/facts.ts), which turns the lag in blocks into seconds.
   */
  watcherPosition(rail: string, environment: string, head: bigint, cursor: bigint, blockSeconds: number): void;
  /** A provider lagged, erred or disagreed, or was sidelined for it (a failover); `position` is its 1-based place in the configured list. */
  provider(event: ProviderEvent, rail: string, environment: string, position: number): void;
  /**
   * An M-Pesa STK step: a push (`accepted`, `error`), a callback by its result code (`0`, a known
   * code, or `other`), or a prompt's settlement from the STK query (`succeeded`, `failed`,
   * `pending`, `unknown_request`, `not_ours`, `error`), or an STK Push Query's answer (`query`: its
   * ResultCode as `0`, a known code or `other`; `pending`, `unknown_request`; `error` when Daraja
   * could not be asked or answered something else).
   */
  stk(step: 'push' | 'callback' | 'settlement' | 'query', result: string): void;
  webhookAttempt(outcome: WebhookOutcome): void;
  /** A delivery ran out of attempts (about three days). */
  webhookDeliveryExhausted(): void;
  /** An endpoint disabled by Malipo: it answered 410 (`gone`), or nothing reached it for a whole delivery (`failing`). */
  webhookEndpointDisabled(reason: 'gone' | 'failing'): void;
  reconciliationFindings(rail: string, kind: string, count: number): void;
  idempotencyConflict(code: string): void;
}

const nothing = () => undefined;

/** Records nothing: the default of parts handed no recorder (most tests). */
export const noMetrics: Metrics = {
  httpRequest: nothing,
  link: nothing,
  linkConfirmedAfter: nothing,
  deposits: nothing,
  watcherPosition: nothing,
  provider: nothing,
  stk: nothing,
  webhookAttempt: nothing,
  webhookDeliveryExhausted: nothing,
  webhookEndpointDisabled: nothing,
  reconciliationFindings: nothing,
  idempotencyConflict: nothing,
};
