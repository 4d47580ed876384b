import { NativeConnection } from '@temporalio/worker';

/** The answer of a Temporal server whose port is open but whose frontend has not joined its cluster yet. */
const startingUp = /not healthy yet|Frontend is not healthy|UNAVAILABLE|service is currently unavailable/i;

/**
 * Connects to Temporal, asking again while the server answers that it is still starting (its
 * port takes connections before its frontend serves: "Frontend is not healthy yet"), for at most
 * `startupMs`; 0 asks once. Any other failure is thrown at once. `connect` is the SDK's unless
 * given (tests).
 */
export async function connectTemporal(
  address: string,
  startupMs: number,
  connect: (address: string) => Promise<NativeConnection> = (a) => NativeConnection.connect({ address: a }),
  pauseMs = 250,
): Promise<NativeConnection> {
  const deadline = Date.now() + startupMs;
  for (;;) {
    try {
      return await connect(address);
    } catch (err) {
      if (!startingUp.test(String((err as Error)?.message ?? err)) || Date.now() + pauseMs > deadline) throw err;
      await new Promise((resolve) => setTimeout(resolve, pauseMs));
    }
  }
}
