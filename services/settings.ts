import type { MpesaEndpoints, RailSettings } from '../rails/settings.js';
import type { KeyringSettings } from './keyring.js';
import type { NativePriceSettings } from './rates/native-prices.js';

/**
 * The settings the services read. The composition root hands them the parsed configuration,
 * which has these and more; no service imports config/.
 */
export interface ServiceSettings extends KeyringSettings {
  /** First part of every API key (`sk_test_…`). */
  readonly keyPrefix: string;
  /** How long a process reuses a key's successful check (0: never); a revocation elsewhere holds within it. */
  readonly apiKeyCacheSeconds: number;
  /** Where this deployment answers: logo URLs, M-Pesa callback URLs. */
  readonly publicBaseUrl: string;
  /** Where the hosted checkout pages live (`<checkoutBaseUrl>/p/<id>`). */
  readonly checkoutBaseUrl: string;
  readonly temporal: { readonly taskQueuePrefix: string };
  readonly webhooks: WebhookSettings;
  /** First STK query for a prompt whose callback has not come. */
  readonly mpesaQueryAfterSeconds: number;
  /** How often an open link's workflow reads its recorded deposits when nothing wakes it. */
  readonly evidencePullSeconds: number;
  /** A link's workflow continues as new past this many history events. */
  readonly linkHistoryEventLimit: number;
  /** false: never start chain watchers (M-Pesa-only or offline deployments). */
  readonly chainWatchers: boolean;
  /** Caught-up watchers' poll interval; undefined: each chain's own. */
  readonly chainPollMs: number | undefined;
  /** GET /ready's bounds on a chain watcher in this process; undefined: each chain's default (rails/chain/watcher-positions.ts). */
  readonly readyChain: { readonly staleSeconds: number | undefined; readonly lagBlocks: number | undefined };
  /** Minutes between reconciler runs; 0: no reconciler. */
  readonly reconcileEveryMinutes: number;
  /** Minutes between scheduled M-Pesa pulls; 0: none. */
  readonly mpesaPullEveryMinutes: number;
  /** Seconds before a new sweep destination is usable (24 h by default; docs/treasury.md). */
  readonly treasuryDestinationDelaySeconds: number;
  /** Native-coin USD prices for the cost of sweep plans (docs/rates.md, "Native coin prices"). */
  readonly nativePrices: NativePriceSettings;
  readonly rails: RailSettings;
  readonly mpesa: MpesaEndpoints;
}

export interface WebhookSettings {
  /** Shrinks every retry timer; tests and demos only (docs/webhooks.md). */
  readonly retryScale: number;
  /** `ip[:port]` resolvers for live webhook hosts; empty: the system's. */
  readonly dnsServers: readonly string[];
  /** Canonical CIDRs test-mode webhooks may reach besides public addresses (never link-local). */
  readonly testAllowedNetworks: readonly string[];
  /** The outbox relay (worker/webhook-relay.ts): whether this process's webhooks workers run it, and its idle pause. */
  readonly relay: { readonly enabled: boolean; readonly pollMs: number };
}
