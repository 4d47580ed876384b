import { createConnection, createServer, type Server, type Socket } from 'node:net';

/**
 * A TCP pass-through in front of a service (the Temporal frontend) that can be switched off and on:
 * off, every open connection is cut and new ones are reset at once, as when the service's host
 * is unreachable; on, it passes everything through again. Stalled, connections stay open and
 * nothing passes either way (a frontend that hangs) until `onAgain`, which lets what waited through.
 */
export class TcpSwitch {
  private on = true;
  private stalled = false;
  private readonly sockets = new Set<Socket>();
  private readonly pairs = new Set<[Socket, Socket]>();
  private constructor(private readonly server: Server, readonly address: string) {}

  static async start(target: string): Promise<TcpSwitch> {
    const [host, port] = [target.slice(0, target.lastIndexOf(':')), Number(target.slice(target.lastIndexOf(':') + 1))];
    let self: TcpSwitch | undefined;
    const server = createServer((client) => {
      if (!self!.on) return void client.destroy();
      const upstream = createConnection({ host, port });
      for (const s of [client, upstream]) {
        self!.sockets.add(s);
        s.on('error', () => undefined).on('close', () => {
          self!.sockets.delete(s);
          client.destroy();
          upstream.destroy();
        });
      }
      const pair: [Socket, Socket] = [client, upstream];
      self!.pairs.add(pair);
      client.on('close', () => self!.pairs.delete(pair));
      if (!self!.stalled) connect(pair);
    });
    await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
    self = new TcpSwitch(server, `127.0.0.1:${(server.address() as { port: number }).port}`);
    return self;
  }

  /** Holds every byte, both ways, on open and new connections alike. */
  stall(): void {
    this.stalled = true;
    for (const [client, upstream] of this.pairs) {
      client.unpipe(upstream).pause();
      upstream.unpipe(client).pause();
    }
  }

  off(): void {
    this.on = false;
    for (const s of this.sockets) s.destroy();
  }

  onAgain(): void {
    this.on = true;
    if (this.stalled) {
      this.stalled = false;
      for (const pair of this.pairs) connect(pair);
    }
  }

  async close(): Promise<void> {
    this.off();
    await new Promise<void>((resolve) => this.server.close(() => resolve()));
  }
}

function connect([client, upstream]: [Socket, Socket]): void {
  client.pipe(upstream);
  upstream.pipe(client);
}
