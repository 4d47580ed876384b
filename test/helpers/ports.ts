import { createServer } from 'node:net';

/**
 * Ports below Linux's ephemeral range (32768–60999 by default), where outgoing connections take
 * their local ports: a port the OS hands out with `listen(0)` is ephemeral, and another test's
 * outgoing connection can take it between this check and the server that binds it later (a
 * child process, seconds on). Below the range only another listener can, and we look first.
 */
const lowest = 20_000;
const span = 12_000;

function canListen(port: number): Promise<boolean> {
  return new Promise((resolve) => {
    const s = createServer();
    s.once('error', () => resolve(false));
    s.listen(port, '127.0.0.1', () => s.close(() => resolve(true)));
  });
}

/** A port nothing listens on right now, outside the ephemeral range, for servers a test or bench starts. */
export async function freePort(): Promise<number> {
  for (;;) {
    const port = lowest + Math.floor(Math.random() * span);
    if (await canListen(port)) return port;
  }
}
