import { describe, expect, it } from '@jest/globals';
import type { NativeConnection } from '@temporalio/worker';
import { connectTemporal } from '../../runtime/temporal-connect.js';

/**
 * Connecting to a Temporal dev server just started (runtime/temporal-connect.ts): its port takes
 * connections before its frontend serves, and the SDK's connect then fails with "Frontend is not
 * healthy yet" (seen in CI under load: the demo exited). It is asked again within the startup
 * window; any other failure, or the window's end, is the caller's.
 */
const notHealthy = () => new Error('Failed to call GetSystemInfo: code: \'The service is currently unavailable\', message: "Frontend is not healthy yet"');
const connection = {} as NativeConnection;

function scripted(failures: Array<() => Error>) {
  let calls = 0;
  return {
    connect: async (address: string) => {
      expect(address).toBe('127.0.0.1:7233');
      calls++;
      const failure = failures.shift();
      if (failure) throw failure();
      return connection;
    },
    calls: () => calls,
  };
}

describe('connectTemporal', () => {
  it('asks again while the frontend is not healthy yet, then connects', async () => {
    const server = scripted([notHealthy, notHealthy, notHealthy]);
    await expect(connectTemporal('127.0.0.1:7233', 5_000, server.connect, 5)).resolves.toBe(connection);
    expect(server.calls()).toBe(4);
  });

  it('gives up at the end of the startup window with the server’s answer', async () => {
    const server = scripted(Array.from({ length: 1_000 }, () => notHealthy));
    await expect(connectTemporal('127.0.0.1:7233', 100, server.connect, 10)).rejects.toThrow(/Frontend is not healthy yet/);
    expect(server.calls()).toBeGreaterThan(1);
    expect(server.calls()).toBeLessThan(20);
  });

  it('asks once when there is no startup window (a Temporal it did not start), and throws any other failure at once', async () => {
    const external = scripted([notHealthy]);
    await expect(connectTemporal('127.0.0.1:7233', 0, external.connect, 5)).rejects.toThrow(/not healthy yet/);
    expect(external.calls()).toBe(1);
    const refused = scripted([() => new Error('Failed to connect: transport error: Connection refused')]);
    await expect(connectTemporal('127.0.0.1:7233', 5_000, refused.connect, 5)).rejects.toThrow(/Connection refused/);
    expect(refused.calls()).toBe(1);
  });
});
