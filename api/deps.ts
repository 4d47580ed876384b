import type { Tracer } from '@opentelemetry/api';
import type { ServiceDeps } from '../services/deps.js';
import type { ServiceSettings } from '../services/settings.js';
import type { RateLimitStore } from './plugins/rate-limit.js';

/** The settings the API reads besides the services': handed over by the composition root. */
export interface ApiSettings extends ServiceSettings {
  /** Proxies whose X-Forwarded-For is believed (TRUST_PROXY): false, or addresses and ranges. */
  readonly trustProxy: false | readonly string[];
  /** Claim lease of an Idempotency-Key, renewed while the request runs. */
  readonly idempotencyLeaseSeconds: number;
  /** Whether anyone may sign up to the dashboard with a new store (DASHBOARD_SIGNUP=open). */
  readonly dashboardSignup: boolean;
  /** `uiUrl`: the Temporal Web UI the dashboard links a link's workflow to (TEMPORAL_UI_URL); none, no link. */
  readonly temporal: ServiceSettings['temporal'] & { readonly uiUrl?: string };
  /** METRICS_TOKEN: the bearer token GET /metrics asks for; unset, the route answers 404. */
  readonly metricsToken?: string;
}

/** Everything a handler may reach: the services' dependencies, and the API's own rate-limit store. */
export interface ApiDeps extends ServiceDeps {
  config: ApiSettings;
  rateLimitStore: RateLimitStore;
  /** The process's metrics, served on GET /metrics (runtime/metrics.ts); none, the route answers 404. */
  metricsText?: () => Promise<{ contentType: string; body: string }>;
  /** With tracing on (runtime/tracing.ts): the tracer of the requests' server spans; none, no span. */
  tracer?: Tracer;
}
