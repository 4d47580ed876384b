import { userInfo } from 'node:os';

/** Where the Temporal databases live: the server (host, port, credentials) of `DATABASE_URL`. */
export interface PostgresTarget {
  host: string;
  port: number;
  user: string;
  password: string;
  /** `sslmode` of the URL: require and verify-* turn TLS on for the Temporal server too. */
  sslmode: string | undefined;
}

export function postgresTargetOf(databaseUrl: string): PostgresTarget {
  let url: URL;
  try {
    url = new URL(databaseUrl);
  } catch {
    throw new Error('DATABASE_URL is not a postgres://user:password@host:port/database URL');
  }
  if (!/^postgres(ql)?:$/.test(url.protocol) || !url.hostname) {
    throw new Error('DATABASE_URL must be a postgres://user:password@host:port/database URL with a host (the Temporal server connects over TCP)');
  }
  return {
    host: url.hostname.replace(/^\[(.*)\]$/, '$1'),
    port: Number(url.port || 5432),
    user: decodeURIComponent(url.username) || userInfo().username,
    password: decodeURIComponent(url.password),
    sslmode: url.searchParams.get('sslmode') ?? undefined,
  };
}

/** The same server with another database: for creating, migrating and dropping the Temporal ones. */
export function databaseUrlOn(databaseUrl: string, database: string): string {
  const url = new URL(databaseUrl);
  url.pathname = `/${database}`;
  return url.toString();
}

export function databaseNameOf(databaseUrl: string): string {
  return decodeURIComponent(new URL(databaseUrl).pathname.replace(/^\//, '')) || userInfo().username;
}
