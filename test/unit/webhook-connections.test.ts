import { afterEach, describe, expect, it } from '@jest/globals';
import { createServer, type Server, type Socket } from 'node:net';
import { postWebhook, type PostRequest } from '../../services/webhooks/http-post.js';

/**
 * How a webhook POST uses connections (services/webhooks/http-post.ts), against a raw TCP server
 * that numbers its connections: kept alive and reused only for the same checked addresses, and a
 * reused connection the endpoint closed without answering retried once on a new one.
 */
interface Seen {
  connection: number;
  requestLine: string;
}

let server: Server | undefined;
const open = new Set<Socket>();
afterEach(async () => {
  // The client keeps its connections alive: close them from this side, or close() waits for their idle timeout.
  for (const s of open) s.destroy();
  open.clear();
  await new Promise<void>((resolve) => (server ? server.close(() => resolve()) : resolve()));
});

/** `answer(n, connection)`: true to answer the n-th request (from 1) with 200 and keep the connection, false to reset it unanswered. */
async function rawServer(answer: (nth: number, connection: number) => boolean): Promise<{ port: number; seen: Seen[] }> {
  const seen: Seen[] = [];
  let connections = 0;
  let requests = 0;
  server = createServer((socket: Socket) => {
    const connection = ++connections;
    open.add(socket);
    let buffered = '';
    socket.on('data', (chunk) => {
      buffered += chunk.toString('latin1');
      // One whole request: the headers, then the body of its content-length.
      for (;;) {
        const end = buffered.indexOf('\r\n\r\n');
        if (end < 0) return;
        const length = Number(/content-length: (\d+)/i.exec(buffered.slice(0, end))?.[1] ?? 0);
        if (buffered.length < end + 4 + length) return;
        const requestLine = buffered.slice(0, buffered.indexOf('\r\n'));
        buffered = buffered.slice(end + 4 + length);
        seen.push({ connection, requestLine });
        if (!answer(++requests, connection)) {
          socket.resetAndDestroy();
          return;
        }
        socket.write('HTTP/1.1 200 OK\r\ncontent-length: 2\r\nconnection: keep-alive\r\nkeep-alive: timeout=5\r\n\r\nok');
      }
    });
    socket.on('error', () => undefined);
  });
  await new Promise<void>((resolve) => server!.listen(0, '127.0.0.1', resolve));
  const address = server.address();
  return { port: typeof address === 'object' && address ? address.port : 0, seen };
}

const request = (port: number, path: string, pinned: PostRequest['pinned'] = [{ address: '127.0.0.1', family: 4 }]): PostRequest => ({
  url: new URL(`http://127.0.0.1:${port}${path}`), headers: { 'content-type': 'application/json' }, body: '{"n":1}', pinned, revealResponse: true,
});

describe('webhook connections', () => {
  it('reuses a kept-alive connection for attempts to the same checked addresses, one at a time', async () => {
    const { port, seen } = await rawServer(() => true);
    for (const path of ['/a', '/b', '/c']) expect((await postWebhook(request(port, path))).status).toBe(200);
    expect(seen.map((s) => s.connection)).toEqual([1, 1, 1]);
  });

  it('never reuses a connection for an attempt whose check gave other addresses', async () => {
    const { port, seen } = await rawServer(() => true);
    expect((await postWebhook(request(port, '/one'))).status).toBe(200);
    // The same URL, checked again, now pointing at more addresses: a pool of its own, a new connection.
    const wider = [{ address: '127.0.0.1', family: 4 as const }, { address: '127.0.0.2', family: 4 as const }];
    expect((await postWebhook(request(port, '/two', wider))).status).toBe(200);
    expect((await postWebhook(request(port, '/three'))).status).toBe(200);
    expect(seen.map((s) => [s.requestLine.split(' ')[1], s.connection])).toEqual([['/one', 1], ['/two', 2], ['/three', 1]]);
  });

  it('sends again, once, on a new connection when a reused one is closed before any answer', async () => {
    // The second request (the first on a reused connection) is reset unanswered, as an endpoint closing an idle connection does.
    const { port, seen } = await rawServer((nth) => nth !== 2);
    expect((await postWebhook(request(port, '/first'))).status).toBe(200);
    const second = await postWebhook(request(port, '/second'));
    expect(second).toMatchObject({ status: 200, error: null });
    expect(seen.map((s) => [s.requestLine.split(' ')[1], s.connection])).toEqual([['/first', 1], ['/second', 1], ['/second', 2]]);
  });

  it('reports a reset on a new connection as the attempt\'s failure, without sending again', async () => {
    const { port, seen } = await rawServer(() => false);
    const result = await postWebhook(request(port, '/reset'));
    expect(result.status).toBeNull();
    expect(result.error).toBe('connection reset by the endpoint');
    expect(seen).toHaveLength(1);
  });
});
