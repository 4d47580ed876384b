/**
 * The Standard Webhooks retry schedule: each entry is the wait before that attempt, counted from
 * the previous failure — immediately, 5 s, 5 min, 30 min, 2 h, 5 h, 10 h, 14 h, 20 h, 24 h — so an
 * event is tried ten times over about three days. Pure and clock-free: the delivery workflow
 * turns these into durable timers.
 */
export const retryScheduleSeconds: readonly number[] = [0, 5, 300, 1800, 7200, 18000, 36000, 50400, 72000, 86400];

/** ±10 % jitter, so endpoints that failed together do not all get retried in the same second. */
export const jitterFraction = 0.1;

/** Temporal timers shorter than this are pointless; a scaled schedule never goes below it. */
const minimumDelayMs = 10;

/**
 * The wait before attempt `index` (0-based) in milliseconds. `scale` shrinks the whole schedule
 * (WEBHOOK_RETRY_SCALE; tests and demos use 0.001 and less, production 1). `random` is a value in
 * [0, 1): inside a workflow, Temporal's deterministic `Math.random`.
 */
export function retryDelayMs(index: number, scale: number, random: number): number {
  const base = retryScheduleSeconds[index];
  if (base === undefined) throw new Error(`no attempt ${index + 1}: the schedule has ${retryScheduleSeconds.length}`);
  if (base === 0) return 0;
  const jitter = 1 + (random * 2 - 1) * jitterFraction;
  return Math.max(minimumDelayMs, Math.round(base * 1000 * scale * jitter));
}

export const maxAttempts = retryScheduleSeconds.length;
