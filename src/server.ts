// The process: config, the app, graceful shutdown (stop accepting, finish requests, flush, exit 0).
import cluster from 'node:cluster';
import { resolve } from 'node:path';
import { fileURLToPath, pathToFileURL } from 'node:url';
import type { FastifyInstance } from 'fastify';
import { ConfigError, loadConfig, type Config, type DatabaseConfig } from './config.ts';
import { buildApp } from './app.ts';
import { flushLog } from './http/logging.ts';
import { isClusterPrimary, runPrimary } from './cluster.ts';
import { drain } from './health/drain.ts';
import { whenNpmParentExits } from './parent-exit.ts';
import { redactDatabaseUrl } from './store/open-errors.ts';
import { databaseSchemaOf } from './store/layout.ts';
import { hasAnyUser } from './users/repository.ts';
import { describeUnknownVariable, unknownVariables } from './unknown-variables.ts';

/** Longest a shutdown may take before the process exits anyway (pino still writes what the log holds). */
const SHUTDOWN_DEADLINE_MS = 10_000;

export async function serve(config: Config): Promise<void> {
  const app = await buildApp(config);
  // The OpenID Connect signing keys: the first made now, and a SIGNING_KEY_SECRET that does not open
  // them stops the start here, not at a user's first sign-in.
  try {
    await app.tokend.signingKeys.ready();
  } catch (err) {
    await app.close().catch(() => {});
    throw err;
  }
  let closing = false;
  const shutdown = (signal: string) => {
    if (closing) return;
    closing = true;
    app.log.info({ signal }, 'shutting down');
    const deadline = setTimeout(() => {
      app.log.error('shutdown took too long; exiting');
      process.exit(1);
    }, SHUTDOWN_DEADLINE_MS);
    deadline.unref();
    drain(app.server, config.shutdownDrainMs)
      .then(() => app.close())
      .then(
        () => 0,
        (err: unknown) => {
          app.log.error({ err }, 'error while shutting down');
          return 1;
        },
      )
      .then(async (code) => {
        await flushLog(app.log);
        process.exit(code);
      });
  };
  process.once('SIGTERM', () => shutdown('SIGTERM'));
  process.once('SIGINT', () => shutdown('SIGINT'));
  // A worker's parent is the cluster's primary, which watches for itself.
  if (!cluster.isWorker) whenNpmParentExits(() => shutdown('npm exited'));
  try {
    await app.listen({ host: config.host, port: config.port });
  } catch (err) {
    await app.close().catch(() => {});
    throw new Error(listenFailure(err, config), { cause: err });
  }
  // With WORKERS > 1, the first worker says it for all.
  if (!cluster.isWorker || cluster.worker?.id === 1) await announce(app, config);
  // The start-up lines now, not when the log's next write is due.
  await flushLog(app.log);
}

/** The database in use, in words: the SQLite file's full path, or the server's URL without its password. */
export function describeDatabase(database: DatabaseConfig): string {
  switch (database.kind) {
    case 'sqlite':
      return database.path === ':memory:' ? 'SQLite in memory' : `SQLite file ${resolve(database.path)}`;
    case 'postgres':
      return `PostgreSQL at ${redactDatabaseUrl(database.url)}`;
    case 'mysql':
      return databaseSchemaOf(database) === 'ripple'
        ? `the Ripple-family database at ${redactDatabaseUrl(database.url)}, in place (DATABASE_SCHEMA=ripple)`
        : `MySQL/MariaDB at ${redactDatabaseUrl(database.url)}`;
  }
}

/** A word for a shell command line: as it is when that is safe, else in single quotes. */
const shellWord = (word: string): string =>
  /^[\w@%+=:,./-]+$/.test(word) ? word : `'${word.replaceAll("'", "'\\''")}'`;

/**
 * The command that creates a user in this server's database, run the way this server was: through npm
 * in the checkout, else with this Node and bin/tokend.js. DATABASE_URL comes first when it was set (a
 * SQLite path made absolute; a server URL with its password as ***, to be filled in).
 */
export function createUserCommand(
  database: DatabaseConfig,
  env: Readonly<Record<string, string | undefined>> = process.env,
): string {
  const tokend =
    env.npm_lifecycle_event !== undefined
      ? 'npm run tokend --'
      : [process.execPath, fileURLToPath(new URL('../bin/tokend.js', import.meta.url))]
          .map(shellWord)
          .join(' ');
  const url =
    env.DATABASE_URL === undefined
      ? undefined
      : database.kind === 'sqlite'
        ? `sqlite:${database.path === ':memory:' ? database.path : resolve(database.path)}`
        : redactDatabaseUrl(database.url);
  return [
    ...(url === undefined ? [] : [shellWord(`DATABASE_URL=${url}`)]),
    tokend,
    'user create --username NAME',
  ].join(' ');
}

/** Logs the database in use and, while no user exists, the one command that creates the first one. */
async function announce(app: FastifyInstance, config: Config): Promise<void> {
  const database = describeDatabase(config.database);
  app.log.info({ database }, `database: ${database}`);
  const empty = await hasAnyUser(app.tokend.store.db).then(
    (any) => !any,
    () => false,
  );
  // In place the users are the family's: tokend makes none there (StoreLayout.makesUsers).
  if (empty && app.tokend.store.layout.makesUsers)
    app.log.info(`no user exists yet; create the first one with: ${createUserCommand(config.database)}`);
}

/** Why the server could not listen, naming HOST and PORT and what to do (one line). */
export function listenFailure(err: unknown, config: Pick<Config, 'host' | 'port'>): string {
  const where = `cannot listen on ${config.host}:${config.port} (HOST, PORT)`;
  switch ((err as { code?: unknown } | null)?.code) {
    case 'EADDRINUSE':
      return `${where}: the port is already in use (another tokend?); stop that process, or set PORT to a free port`;
    case 'EACCES':
      return `${where}: permission denied (ports below 1024 need root or CAP_NET_BIND_SERVICE); set PORT to 1024 or above`;
    case 'EADDRNOTAVAIL':
      return `${where}: no network interface of this machine has that address; set HOST to one it has (or 0.0.0.0)`;
    case 'ENOTFOUND':
    case 'EAI_AGAIN':
      return `${where}: the host name does not resolve; set HOST to an address of this machine`;
  }
  return `${where}: ${err instanceof Error ? err.message : String(err)}`;
}

/**
 * Loads the config or exits with one line naming the bad variable; warns, one line each, about the
 * variables that look like tokend's and are not.
 */
export function loadConfigOrExit(): Config {
  try {
    const config = loadConfig();
    for (const unknown of unknownVariables(process.env))
      process.stderr.write(`tokend: warning: ${describeUnknownVariable(unknown)}\n`);
    return config;
  } catch (err) {
    if (err instanceof ConfigError) {
      process.stderr.write(`tokend: invalid configuration: ${err.message}\n`);
      process.exit(1);
    }
    throw err;
  }
}

/** One process, or with WORKERS > 1 a node:cluster primary here and serve() in each worker. */
export function start(config: Config): Promise<void> {
  return isClusterPrimary(config) ? runPrimary(config) : serve(config);
}

if (import.meta.url === pathToFileURL(process.argv[1] ?? '').href) {
  start(loadConfigOrExit()).catch((err: unknown) => {
    process.stderr.write(`tokend: could not start: ${err instanceof Error ? err.message : String(err)}\n`);
    process.exit(1);
  });
}
