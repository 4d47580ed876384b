import type { Logger } from 'pino';
import { createOutboxRelay } from '../activities/webhooks/relay.js';

/** How the relay paces itself; the defaults serve a deployment, tests pass their own. */
export interface RelayPace {
  /** Pause after a claim found fewer events than it asked for (WEBHOOK_RELAY_POLL_MS). */
  pollMs: number;
  /** Events one claim takes at most. */
  batch: number;
  /** Events being fanned out at once, over all batches; the relay claims no more meanwhile. */
  maxInFlight: number;
  /** Pause after a claim failed (the database away). */
  errorPauseMs: number;
}

export const defaultRelayPace: Omit<RelayPace, 'pollMs'> = { batch: 50, maxInFlight: 200, errorPauseMs: 1_000 };

type Deps = Parameters<typeof createOutboxRelay>[0] & { logger?: Pick<Logger, 'warn'> };

/**
 * The outbox relay: runs beside the Temporal workers of the webhooks queue, in every such
 * process, and dispatches every event the moment its transaction commits (within `pollMs`). A
 * payment link no longer hands its event to an activity of its own: one claim statement takes up
 * to `batch` events, and their first attempts go out inline. Batches overlap (a slow endpoint
 * holds its own batch, not the relay) up to `maxInFlight` events. Processes running it at once
 * split the outbox between them (claims skip rows another holds); a process that dies leaves its
 * claims to lapse (60 s), and the events are claimed again. The sweeper workflow stays the second
 * path: it dispatches what no relay did within a minute.
 */
export function runWebhookRelay(deps: Deps, pace: RelayPace): { stop(): Promise<void> } {
  const relay = createOutboxRelay(deps);
  let stopped = false;
  let inFlight = 0;
  const batches = new Set<Promise<void>>();
  let wake: (() => void) | undefined;
  let timer: NodeJS.Timeout | undefined;
  const pause = (ms: number) => new Promise<void>((resolve) => {
    wake = resolve;
    timer = setTimeout(resolve, ms);
  });
  const woken = () => {
    clearTimeout(timer);
    wake?.();
  };

  const loop = (async () => {
    while (!stopped) {
      const room = Math.min(pace.batch, pace.maxInFlight - inFlight);
      if (room <= 0) {
        await pause(pace.pollMs);
        continue;
      }
      let claimed;
      try {
        claimed = await relay.claim(room);
      } catch (err) {
        deps.logger?.warn({ err }, 'the webhook relay could not claim events; trying again');
        await pause(pace.errorPauseMs);
        continue;
      }
      if (claimed.length > 0) {
        const n = claimed.length;
        inFlight += n;
        const batch: Promise<void> = relay.fanOut(claimed).then(
          () => undefined,
          (err: unknown) => deps.logger?.warn({ err, events: n }, 'a webhook relay batch failed; its events are claimed again when their claim lapses'),
        ).finally(() => {
          inFlight -= n;
          batches.delete(batch);
          woken();
        });
        batches.add(batch);
      }
      // A full claim means more may be waiting: claim again at once.
      if (claimed.length < room && !stopped) await pause(pace.pollMs);
    }
  })();

  return {
    async stop() {
      stopped = true;
      woken();
      await loop;
      await Promise.all([...batches]);
    },
  };
}
