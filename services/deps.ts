import type { Client } from '@temporalio/client';
import type { Logger } from 'pino';
import type { DatabasePool } from 'slonik';
import type { Config } from '../config/config.js';
import type { RateService } from '../activities/rates/rate-service.js';

/** What the services reach: built once by the composition root and handed to every entry point. */
export interface ServiceDeps {
  config: Config;
  pool: DatabasePool;
  temporal: Client;
  rates: RateService;
  logger?: Logger;
}
