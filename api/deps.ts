import type { ServiceDeps } from '../services/deps.js';
import type { RateLimitStore } from './plugins/rate-limit.js';

/** Everything a handler may reach: the services' dependencies, and the API's own rate-limit store. */
export interface ApiDeps extends ServiceDeps {
  rateLimitStore: RateLimitStore;
}
