import { proxyActivities, workflowInfo } from '@temporalio/workflow';
import type { SystemActivities } from '../activities/system/index.js';

const { databaseTime } = proxyActivities<SystemActivities>({
  startToCloseTimeout: '10 seconds',
  retry: { initialInterval: '200 milliseconds', maximumAttempts: 5 },
});

export interface SystemCheckResult {
  workflowId: string;
  databaseTime: string;
  migrations: number;
}

/**
 * A round trip through every moving part: the server schedules the workflow, the worker runs it,
 * an activity reads PostgreSQL. `malipo doctor` and the foundation tests use it.
 */
export async function systemCheck(): Promise<SystemCheckResult> {
  const db = await databaseTime();
  return { workflowId: workflowInfo().workflowId, databaseTime: db.now, migrations: db.migrations };
}
