import type { Client } from '@temporalio/client';
import type { Logger } from 'pino';
import type { DatabasePool } from 'slonik';
import type { RateService } from './rates/rate-service.js';
import type { Metrics } from '../domain/metrics.js';
import type { ServiceSettings } from './settings.js';

/** What the services reach: built once by the composition root and handed to every entry point. */
export interface ServiceDeps {
  config: ServiceSettings;
  pool: DatabasePool;
  temporal: Client;
  rates: RateService;
  logger?: Logger;
  /** Where counts go (runtime/metrics.ts); none, nothing is counted. */
  metrics?: Metrics;
}
