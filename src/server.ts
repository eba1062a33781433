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
  await app.listen({ host: config.host, port: config.port });
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
