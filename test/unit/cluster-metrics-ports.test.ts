import { describe, expect, it } from '@jest/globals';
import { freeWorkerSlot, workerMetricsEnv } from '../../runtime/cluster/app-group.js';

describe("start:cluster's worker metrics ports", () => {
  it('give each worker slot two ports of its own from CLUSTER_METRICS_PORT, and none when it is unset', () => {
    expect(workerMetricsEnv(9400, 0)).toEqual({ WORKER_METRICS_PORT: '9400', TEMPORAL_METRICS_PORT: '9401' });
    expect(workerMetricsEnv(9400, 2)).toEqual({ WORKER_METRICS_PORT: '9404', TEMPORAL_METRICS_PORT: '9405' });
    expect(workerMetricsEnv(undefined, 1)).toEqual({});
  });

  it('hand a new worker the lowest free slot, so a rolling restart reuses the slot the old worker left', () => {
    expect(freeWorkerSlot([])).toBe(0);
    expect(freeWorkerSlot([0, 1])).toBe(2);
    // Slot 2 started while 0 and 1 ran; 0 then stopped: the next replacement takes 0, not 3.
    expect(freeWorkerSlot([1, 2])).toBe(0);
    expect(freeWorkerSlot([0, 2])).toBe(1);
  });
});
