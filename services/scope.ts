import type { Environment } from '../domain/environment.js';

/** Whose data a service call acts on: one store in one environment (the API key's, the session's). */
export interface StoreScope {
  storeId: string;
  environment: Environment;
}
