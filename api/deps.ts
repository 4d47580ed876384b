import type { Client } from '@temporalio/client';
import type { Logger } from 'pino';
import type { DatabasePool } from 'slonik';
import type { Config } from '../runtime/config.js';
import type { RateService } from '../activities/rates/rate-service.js';
import type { RateLimitStore } from './plugins/rate-limit.js';

/** Everything a handler may reach; built once by the process that serves the API. */
export interface ApiDeps {
  config: Config;
  pool: DatabasePool;
  temporal: Client;
  rateLimitStore: RateLimitStore;
  rates: RateService;
  logger?: Logger;
}
