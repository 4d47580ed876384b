import { createServer } from 'node:net';

/** A port nothing listens on right now on 127.0.0.1 (the OS picks it). */
export function freePort(): Promise<number> {
  return new Promise((resolve, reject) => {
    const s = createServer();
    s.once('error', reject);
    s.listen(0, '127.0.0.1', () => {
      const port = (s.address() as { port: number }).port;
      s.close(() => resolve(port));
    });
  });
}

export function isPortFree(port: number): Promise<boolean> {
  return new Promise((resolve) => {
    const s = createServer();
    s.once('error', () => resolve(false));
    s.listen(port, '127.0.0.1', () => s.close(() => resolve(true)));
  });
}

/** `n` distinct free ports (the OS never hands out one twice while the first is still bound). */
export async function freePorts(n: number): Promise<number[]> {
  const ports = new Set<number>();
  while (ports.size < n) ports.add(await freePort());
  return [...ports];
}

/**
 * A free port below 32768, where the OS never hands out ephemeral ports: Temporal stores each
 * service's membership port in a smallint column (cluster_membership.rpc_port), and the OS's
 * own picks (32768 and up) overflow it.
 */
export async function freeLowPort(taken: ReadonlySet<number> = new Set()): Promise<number> {
  for (let i = 0; i < 1000; i++) {
    const port = 10_000 + Math.floor(Math.random() * 22_767);
    if (!taken.has(port) && (await isPortFree(port))) return port;
  }
  throw new Error('no free port found between 10000 and 32767');
}
