/**
 * How long one readiness check may take. Every check runs at once, so GET /ready answers within
 * about this long even when a dependency accepts connections and never answers; a load balancer's
 * probe timeout (commonly 2 s or more) then sees a 503 naming it rather than no answer.
 */
export const checkTimeoutMs = 1_500;

export type Answer<T> = { ok: true; value: T } | { ok: false; timedOut: boolean };

/**
 * The outcome of `start()` if it settles within `timeoutMs`, else a timeout. The error itself is
 * dropped on purpose: readiness is public, and a driver's message can name the host it could not
 * reach. A late rejection is swallowed rather than left unhandled.
 */
export async function withinDeadline<T>(start: () => Promise<T>, timeoutMs = checkTimeoutMs): Promise<Answer<T>> {
  const work = (async () => start())();
  let timer: NodeJS.Timeout | undefined;
  const timeout = new Promise<Answer<T>>((resolve) => {
    timer = setTimeout(() => resolve({ ok: false, timedOut: true }), timeoutMs);
    timer.unref();
  });
  try {
    return await Promise.race([work.then((value): Answer<T> => ({ ok: true, value }), (): Answer<T> => ({ ok: false, timedOut: false })), timeout]);
  } finally {
    clearTimeout(timer);
  }
}
