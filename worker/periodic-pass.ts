/**
 * A pass that runs beside the Temporal workers every `intervalMs` (the request starter, the C2B
 * hand-off): one pass at a time, the next scheduled only when one has finished; a pass that
 * throws is reported to `onError` and tried again next time. `stop()` waits for a pass in flight.
 */
export function runPeriodicPass(intervalMs: number, pass: (isStopped: () => boolean) => Promise<void>, onError: (err: unknown) => void): { stop(): Promise<void> } {
  let stopped = false;
  let running: Promise<void> = Promise.resolve();
  let timer: NodeJS.Timeout | undefined;
  const tick = () => {
    running = (async () => {
      try {
        await pass(() => stopped);
      } catch (err) {
        onError(err);
      }
      if (!stopped) timer = setTimeout(tick, intervalMs);
    })();
  };
  timer = setTimeout(tick, intervalMs);
  return {
    async stop() {
      stopped = true;
      clearTimeout(timer);
      await running;
    },
  };
}
