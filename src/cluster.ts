// WORKERS=N (or `tokend serve --workers N`): the primary process migrates the database once, forks N
// workers that share the listening socket (each accepts from it), keeps the login rate limit for all of
// them (so 5 attempts means 5 on the whole machine when there is no Redis), restarts a worker that dies
// unexpectedly, and on SIGTERM/SIGINT asks every worker to drain, then exits 0 once all of them have.
import cluster, { type Worker } from 'node:cluster';
import pino from 'pino';
import type { Config } from './config.ts';
import { migrateDatabase } from './store/database.ts';
import { whenNpmParentExits } from './parent-exit.ts';

/** Longest the primary waits for its workers to drain (a worker gives itself 10 s). */
const DRAIN_DEADLINE_MS = 15_000;
/** Restart delays after unexpected deaths double from the first to the last, and reset after a calm minute. */
const FIRST_RESTART_DELAY_MS = 100;
const MAX_RESTART_DELAY_MS = 10_000;
const CALM_MS = 60_000;

/**
 * The primary's log: pino's lines, as the workers' logger writes them (level, time, pid, hostname), with
 * role "primary", so one log pipeline reads both. Written at once (sync): the primary logs little, and
 * often just before process.exit.
 */
const primaryLogger = (level: string) =>
  pino({ level }, pino.destination({ dest: 1, sync: true })).child({ role: 'primary' });

export const isClusterPrimary = (config: Config): boolean => config.workers > 1 && cluster.isPrimary;

export async function runPrimary(config: Config): Promise<void> {
  const log = primaryLogger(config.logLevel);

  // Migrate once here, so N workers do not all queue on the migration lock (they would be safe anyway).
  await migrateDatabase(config.database, { timeoutMs: config.dbTimeoutMs });

  // Holds the login limiter that workers consult over IPC (RateLimiterCluster in src/auth/login-counters.ts).
  const { RateLimiterClusterMaster } = await import('./auth/login-counters.ts');
  new RateLimiterClusterMaster();

  let shuttingDown = false;
  let failedExits = 0;
  let restartDelay = FIRST_RESTART_DELAY_MS;
  let lastUnexpectedDeath = 0;

  // Each worker accepts from the one listening socket itself (SCHED_NONE), instead of the primary
  // accepting every connection and handing it to a worker over IPC (node:cluster's round-robin default).
  // A connection handed to a worker that is killed before it takes it stays open in the primary, never
  // answered and never given to another worker: the client waits until it times out. Here a connection
  // waits in the socket's queue until a live worker accepts it; only what a killed worker already held
  // dies with it. Set before the first fork, which freezes the policy.
  cluster.schedulingPolicy = cluster.SCHED_NONE;
  const fork = (): Worker => cluster.fork();

  cluster.on('listening', (worker, address) => {
    log.info({ worker: worker.process.pid, port: address.port }, 'worker listening');
  });

  cluster.on('exit', (worker, code, signal) => {
    if (shuttingDown) {
      // A worker that had not yet set up its own SIGTERM handler had nothing to drain.
      if (code !== 0 && signal !== 'SIGTERM') failedExits++;
      if (Object.keys(cluster.workers ?? {}).length === 0) {
        log.info({ failedExits }, 'all workers drained');
        process.exit(failedExits === 0 ? 0 : 1);
      }
      return;
    }
    const now = Date.now();
    if (now - lastUnexpectedDeath > CALM_MS) restartDelay = FIRST_RESTART_DELAY_MS;
    lastUnexpectedDeath = now;
    log.error(
      { worker: worker.process.pid, code, signal, restartInMs: restartDelay },
      'worker died; restarting it',
    );
    setTimeout(() => {
      if (!shuttingDown) fork();
    }, restartDelay);
    restartDelay = Math.min(restartDelay * 2, MAX_RESTART_DELAY_MS);
  });

  const shutdown = (signal: NodeJS.Signals) => {
    if (shuttingDown) return;
    shuttingDown = true;
    const workers = Object.values(cluster.workers ?? {}).filter((w): w is Worker => w !== undefined);
    log.info({ signal, workers: workers.length }, 'shutting down: draining workers');
    if (workers.length === 0) process.exit(0);
    for (const worker of workers) worker.process.kill('SIGTERM');
    setTimeout(() => {
      log.error('workers took too long to drain; killing them');
      for (const worker of Object.values(cluster.workers ?? {})) worker?.process.kill('SIGKILL');
      process.exit(1);
    }, DRAIN_DEADLINE_MS).unref();
  };
  process.on('SIGTERM', () => shutdown('SIGTERM'));
  process.on('SIGINT', () => shutdown('SIGINT'));
  whenNpmParentExits(() => shutdown('SIGTERM'));

  log.info({ workers: config.workers }, 'starting workers');
  for (let i = 0; i < config.workers; i++) fork();
}
