import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';

/**
 * The settings the production topology runs with, in one place: `npm run start:cluster` and the
 * cluster test run write them into the Temporal server's config, and docker-compose.yml passes the
 * same values to its images (test/unit/cluster-in-step.test.ts fails when the two drift apart).
 */
export const clusterSettings = {
  /** Fixed when the Temporal database is created; it can never change afterwards (docs/production.md). */
  numHistoryShards: 4,
  /** Per Temporal service and per store: each of the four services opens its own pools. */
  sqlMaxConns: 20,
  sqlMaxIdleConns: 20,
  sqlVisibilityMaxConns: 10,
  sqlVisibilityMaxIdleConns: 10,
  sqlMaxConnLifetime: '1h',
  /** How long Temporal keeps a closed workflow's history (the links themselves live in PostgreSQL). */
  namespaceRetention: '72h',
  /** The embedded schemas of the `sql` tool, for the main and the visibility database. */
  schemaNames: { store: 'postgresql/v12/temporal', visibility: 'postgresql/v12/visibility' },
  sqlPlugin: 'postgres12',
} as const;

/** The dynamic config file both the cluster and docker-compose.yml give the Temporal server. */
export const dynamicConfigPath = join(dirname(fileURLToPath(import.meta.url)), 'temporal-dynamicconfig.yaml');

/** The two Temporal databases: `temporal` and `temporal_visibility`, as the compose file names them. */
export function temporalDatabaseNames(base: string): { store: string; visibility: string } {
  return { store: base, visibility: `${base}_visibility` };
}

export function retentionSeconds(): number {
  const m = /^(\d+)h$/.exec(clusterSettings.namespaceRetention);
  return Number(m![1]) * 3600;
}
