// When the database cannot be opened or reached: one line naming DATABASE_URL (its password removed),
// the cause and what to do.
import type { DatabaseConfig } from '../config.ts';
import { DatabaseTimeoutError } from './errors.ts';

/**
 * The database DATABASE_URL names cannot be opened (SQLite) or reached (a server): one line naming
 * DATABASE_URL (its password removed), the cause and what to do.
 */
export class DatabaseOpenError extends Error {
  override readonly name = 'DatabaseOpenError';
}

/** A database URL fit for messages and logs: the password (in the user part or the query) as ***. */
export function redactDatabaseUrl(url: string): string {
  try {
    const u = new URL(url);
    if (u.password !== '') u.password = '***';
    for (const key of [...u.searchParams.keys()]) if (/pass/i.test(key)) u.searchParams.set(key, '***');
    return u.toString();
  } catch {
    return url.replace(/(\/\/[^:/@]*):[^@]*@/, '$1:***@').replace(/(pass[^=&]*=)[^&]*/gi, '$1***');
  }
}

const databaseUrlOf = (config: DatabaseConfig): string =>
  config.kind === 'sqlite' ? `sqlite:${config.path}` : redactDatabaseUrl(config.url);

/** The SQLite database of DATABASE_URL cannot be opened, for `reason` (in words naming the path). */
export function sqliteOpenError(config: Extract<DatabaseConfig, { kind: 'sqlite' }>, reason: string) {
  return new DatabaseOpenError(
    `cannot open the SQLite database of DATABASE_URL=${databaseUrlOf(config)}: ${reason}; ` +
      'fix that, or set DATABASE_URL to another file',
  );
}

const errorCode = (err: unknown): string | undefined => {
  const code = (err as { code?: unknown } | null)?.code;
  return typeof code === 'string' ? code : undefined;
};

/** The server and user a URL names, for messages. */
function urlParts(url: string): { server: string; user: string; database: string } {
  try {
    const u = new URL(url);
    return {
      server: u.host || 'localhost',
      user: decodeURIComponent(u.username),
      database: decodeURIComponent(u.pathname.replace(/^\//, '')),
    };
  } catch {
    return { server: 'the server', user: '', database: '' };
  }
}

/** The well-known default ports of the servers an operator is likely to run beside tokend. */
const DEFAULT_PORTS: ReadonlyMap<string, string> = new Map([
  ['5432', 'PostgreSQL'],
  ['3306', 'MySQL/MariaDB'],
  ['6379', 'Redis'],
]);

/** The protocol DATABASE_URL's scheme asks the server to speak. */
const kindOf = (url: string): string => (/^postgres(ql)?:/i.test(url) ? 'PostgreSQL' : 'MySQL/MariaDB');

/**
 * When the URL's port is the default port of another kind of server than its scheme names: a hint that
 * the server there answered (or stayed silent) in another protocol. Empty otherwise.
 */
function otherServersPort(url: string): string {
  let port: string;
  try {
    port = new URL(url).port;
  } catch {
    return '';
  }
  const there = DEFAULT_PORTS.get(port);
  const wanted = kindOf(url);
  return there === undefined || there === wanted
    ? ''
    : ` (port ${port} is ${there}'s default port: a ${there} server there never answers as ${wanted}; ` +
        `${wanted}'s is ${[...DEFAULT_PORTS].find(([, kind]) => kind === wanted)?.[0]})`;
}

/** A server that accepted the connection and closed it without a word. */
const closedAtOnce = (server: string): string =>
  `${server} accepted the connection and closed it before answering: is a database server of the kind ` +
  'DATABASE_URL names listening on that host and port (and no firewall or proxy in between closing it)?';

/**
 * Why a connection to a database server failed, in words with the fix, or undefined when `err` is not
 * a failure to connect (a failing query, a bug): that one is reported as it is.
 */
export function connectionFailure(err: unknown, url: string, timeoutMs: number): string | undefined {
  // Node reports a refused connection to every address of a name (::1 and 127.0.0.1) as an AggregateError.
  if (err instanceof AggregateError && err.errors.length > 0)
    return connectionFailure(err.errors[0], url, timeoutMs);
  const { server, user, database } = urlParts(url);
  const message = err instanceof Error ? err.message : String(err);
  const as = user === '' ? 'the user given' : `user "${user}"`;
  switch (errorCode(err)) {
    case 'ECONNREFUSED':
      return `connection refused by ${server}: is the database server running and listening on that host and port?`;
    case 'ENOTFOUND':
    case 'EAI_AGAIN':
      return `the host name of ${server} does not resolve: check the host in DATABASE_URL`;
    case 'EHOSTUNREACH':
    case 'ENETUNREACH':
      return `${server} is unreachable from this machine: check the host in DATABASE_URL and the network`;
    case 'ETIMEDOUT':
      return `${server} did not answer in time: check the host and port in DATABASE_URL and any firewall`;
    case 'ECONNRESET':
    case 'PROTOCOL_CONNECTION_LOST': // mysql2: the server closed the connection
      return closedAtOnce(server);
    // Then PostgreSQL's SQLSTATEs and MySQL/MariaDB's codes (mysql2).
    case '3D000':
    case 'ER_BAD_DB_ERROR':
      return `the server has no database "${database}": create it, or correct its name in DATABASE_URL`;
    case '28P01':
    case '28000':
    case 'ER_ACCESS_DENIED_ERROR':
    case 'ER_ACCESS_DENIED_NO_PASSWORD_ERROR':
      return `authentication failed for ${as} (${message}): check the user and password in DATABASE_URL`;
    case 'ER_DBACCESS_DENIED_ERROR':
      return `${as} may not use the database "${database}" (${message}): grant it, or use another user`;
    case 'ER_HOST_NOT_PRIVILEGED':
      return `the server accepts no connection from this machine (${message}): allow it on the server`;
    case '57P03':
      return `the server is starting up or shutting down (${message}): try again in a moment`;
  }
  // pg, when the server closes the connection before its first answer.
  if (/^Connection terminated unexpectedly$/i.test(message))
    return closedAtOnce(server) + otherServersPort(url);
  // pg, when what answered speaks another protocol (a MySQL/MariaDB server's greeting, say).
  if (/unexpected \S+ message from backend|unknown message code|unexpected message/i.test(message))
    return (
      `${server} answered, but not in ${kindOf(url)}'s protocol (${message}): ` +
      `is another kind of server listening there?${otherServersPort(url)}`
    );
  const noConnection =
    (err instanceof DatabaseTimeoutError && err.waitedFor === 'connection') ||
    /timeout exceeded when trying to connect|connection timeout/i.test(message);
  if (noConnection)
    return (
      `no connection to ${server} within DB_TIMEOUT_MS (${timeoutMs} ms): is the server up and reachable?` +
      otherServersPort(url)
    );
  if (/client password must be a string|password authentication failed/i.test(message))
    return `the server wants a password for ${as} and DATABASE_URL gives none (or a wrong one): add it as user:password@`;
  return undefined;
}

/** `err` as a DatabaseOpenError when it is a failure to connect to the server, else `err` itself. */
export function asOpenError(err: unknown, config: DatabaseConfig, timeoutMs: number): unknown {
  if (config.kind === 'sqlite' || err instanceof DatabaseOpenError) return err;
  const cause = connectionFailure(err, config.url, timeoutMs);
  if (cause === undefined) return err;
  const what = `cannot connect to the database of DATABASE_URL=${databaseUrlOf(config)}`;
  return new DatabaseOpenError(`${what}: ${cause}`, { cause: err });
}
