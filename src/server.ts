// The process: config, the app, graceful shutdown (stop accepting, finish requests, flush, exit 0).
import { pathToFileURL } from 'node:url';
import { ConfigError, loadConfig, type Config } from './config.ts';
import { buildApp } from './app.ts';
import { isClusterPrimary, runPrimary } from './cluster.ts';
import { drain } from './health/drain.ts';

/** Longest a shutdown may take before the process exits anyway. */
const SHUTDOWN_DEADLINE_MS = 10_000;

export async function serve(config: Config): Promise<void> {
  const app = await buildApp(config);
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
        () => process.exit(0),
        (err: unknown) => {
          app.log.error({ err }, 'error while shutting down');
          process.exit(1);
        },
      );
  };
  process.once('SIGTERM', () => shutdown('SIGTERM'));
  process.once('SIGINT', () => shutdown('SIGINT'));
  try {
    await app.listen({ host: config.host, port: config.port });
  } catch (err) {
    await app.close().catch(() => {});
    throw new Error(listenFailure(err, config), { cause: err });
  }
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

/** Loads the config or exits with one line naming the bad variable. */
export function loadConfigOrExit(): Config {
  try {
    return loadConfig();
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
