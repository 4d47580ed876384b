import { createConnection, createServer, type Server, type Socket } from 'node:net';

/**
 * A TCP proxy in front of PostgreSQL that reads the frontend side of the wire protocol and
 * records every statement the clients run: each simple query ('Q') and each Execute ('E') of an
 * extended-protocol statement, with the SQL of the statement its Bind ('B') names: the Parse ('P')
 * just before it, or for a named (prepared) statement the Parse that named it. What a pool sends on
 * its own (a connection reset, a `SELECT 1` check) is counted too: this is what PostgreSQL sees.
 */
export class StatementCounter {
  readonly statements: string[] = [];
  /** The same statements with the client connection that sent each (numbered from 1). */
  readonly log: Array<{ connection: number; sql: string }> = [];
  private constructor(private readonly server: Server, readonly port: number, private readonly sockets: Set<Socket>) {}

  static async start(target: { host: string; port: number } = { host: '127.0.0.1', port: 5432 }): Promise<StatementCounter> {
    const sockets = new Set<Socket>();
    let counter: StatementCounter | undefined;
    let connections = 0;
    const server = createServer((client) => {
      const connection = ++connections;
      const upstream = createConnection(target);
      sockets.add(client).add(upstream);
      const forget = () => {
        sockets.delete(client);
        sockets.delete(upstream);
        client.destroy();
        upstream.destroy();
      };
      client.on('close', forget).on('error', forget);
      upstream.on('close', forget).on('error', forget);
      upstream.pipe(client);
      const reader = frontendReader((sql) => {
        counter!.statements.push(sql);
        counter!.log.push({ connection, sql });
      });
      client.on('data', (chunk: Buffer) => {
        reader(chunk);
        upstream.write(chunk);
      });
    });
    await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
    counter = new StatementCounter(server, (server.address() as { port: number }).port, sockets);
    return counter;
  }

  /** `url` (a postgres:// URL) pointed at this proxy instead. */
  urlFor(url: string): string {
    const u = new URL(url);
    u.hostname = '127.0.0.1';
    u.port = String(this.port);
    return u.toString();
  }

  /**
   * The statements matching `pattern` (recorded from `from` on) that ran inside an explicit
   * transaction of their connection, between its BEGIN / START TRANSACTION and COMMIT / ROLLBACK.
   */
  inTransaction(pattern: RegExp, from = 0): string[] {
    const open = new Set<number>();
    const found: string[] = [];
    for (const { connection, sql } of this.log.slice(from)) {
      if (/^(BEGIN|START TRANSACTION)\b/i.test(sql)) open.add(connection);
      else if (/^(COMMIT|ROLLBACK)\b/i.test(sql)) open.delete(connection);
      else if (open.has(connection) && pattern.test(sql)) found.push(sql);
    }
    return found;
  }

  /** The statements recorded while `work` ran. */
  async during(work: () => Promise<unknown>): Promise<string[]> {
    const from = this.statements.length;
    await work();
    return this.statements.slice(from);
  }

  async close(): Promise<void> {
    for (const s of this.sockets) s.destroy();
    await new Promise<void>((resolve) => this.server.close(() => resolve()));
  }
}

/** Parses one client's byte stream into messages, however TCP splits them. */
function frontendReader(onStatement: (sql: string) => void): (chunk: Buffer) => void {
  let buffered = Buffer.alloc(0);
  let started = false; // before the startup message, messages have no type byte
  let parsed = ''; // the unnamed statement's SQL
  const named = new Map<string, string>();
  let bound = '';
  return (chunk) => {
    buffered = Buffer.concat([buffered, chunk]);
    for (;;) {
      if (!started) {
        if (buffered.length < 8) return;
        const length = buffered.readInt32BE(0);
        if (buffered.length < length) return;
        const code = buffered.readInt32BE(4);
        // SSLRequest and GSSENCRequest are answered with one byte, then the real startup follows.
        if (code !== 80877103 && code !== 80877104) started = true;
        buffered = buffered.subarray(length);
        continue;
      }
      if (buffered.length < 5) return;
      const type = String.fromCharCode(buffered[0]!);
      const length = buffered.readInt32BE(1);
      if (buffered.length < 1 + length) return;
      const body = buffered.subarray(5, 1 + length);
      if (type === 'Q') onStatement(cString(body, 0).trim());
      if (type === 'P') {
        const name = cString(body, 0); // statement name, then the SQL
        const sql = cString(body, body.indexOf(0) + 1).trim();
        if (name) named.set(name, sql);
        else parsed = sql;
      }
      if (type === 'B') {
        const statement = cString(body, body.indexOf(0) + 1); // portal name, then statement name
        bound = statement ? (named.get(statement) ?? '') : parsed;
      }
      if (type === 'E') onStatement(bound);
      buffered = buffered.subarray(1 + length);
    }
  };
}

function cString(body: Buffer, from: number): string {
  const end = body.indexOf(0, from);
  return body.subarray(from, end < 0 ? body.length : end).toString('utf8');
}
