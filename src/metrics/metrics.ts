// The service's Prometheus metrics. One registry per app instance, so several apps in one process
// (tests, workers) never share or double-register series.
import { Counter, Gauge, Histogram, Registry } from './prom-classes.ts';
import type { LoginResult } from '../tokens/service.ts';
import type { Store } from '../store/database.ts';
import type { EventSink } from '../auth/security-log.ts';
import { OutboxEvents } from '../auth/event-outbox.ts';

const LOOP_TICK_MS = 10;

/** Login outcomes as labelled on tokend_login_attempts_total: `ok` or the response code. */
export const LOGIN_OUTCOME: Readonly<Record<LoginResult['kind'], string>> = {
  created: 'ok',
  'no-user': '404',
  'rate-limited': '429',
  'legacy-password': '418',
  'wrong-password': '403',
  banned: '402',
  'too-many-tokens': '409',
  'too-many-created': '429',
  busy: '503',
};

/** Label for requests that matched no route: raw URLs would make the series unbounded. */
export const UNMATCHED_ROUTE = '(unmatched)';

export class TokendMetrics {
  readonly registry = new Registry();
  private poolStats: Store['poolStats'];

  readonly httpDuration = new Histogram({
    name: 'tokend_http_request_duration_seconds',
    help: 'Time to answer an HTTP request, by method, route pattern and status code.',
    labelNames: ['method', 'route', 'code'] as const,
    buckets: [0.001, 0.0025, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10],
    registers: [this.registry],
  });

  /**
   * The same counts as the histogram's `_count` series, kept under their own name for dashboards: read
   * from the histogram at each scrape, so a request updates one metric, not two.
   */
  readonly httpRequests = new Counter({
    name: 'tokend_http_requests_total',
    help: 'HTTP requests answered, by method, route pattern and status code.',
    labelNames: ['method', 'route', 'code'] as const,
    registers: [this.registry],
    collect: async () => {
      const counts = (await this.httpDuration.get()).values.filter(
        (value) => value.metricName === 'tokend_http_request_duration_seconds_count',
      );
      this.httpRequests.reset();
      for (const { labels, value } of counts) this.httpRequests.inc(labels, value);
    },
  });

  readonly tokensCreated = new Counter({
    name: 'tokend_tokens_created_total',
    help: 'Tokens created, by where they were created (api: the token creation endpoint; web: the token page).',
    labelNames: ['via'] as const,
    registers: [this.registry],
  });

  readonly loginAttempts = new Counter({
    name: 'tokend_login_attempts_total',
    help: 'Token creation attempts that reached the user lookup, by outcome (ok or the response code).',
    labelNames: ['outcome'] as const,
    registers: [this.registry],
  });

  readonly fixPrivilegesRuns = new Counter({
    name: 'tokend_fix_privileges_runs_total',
    help: 'fix_privileges jobs that finished.',
    registers: [this.registry],
  });

  readonly fixPrivilegesRows = new Counter({
    name: 'tokend_fix_privileges_rows_rewritten_total',
    help: 'Token rows whose privileges fix_privileges rewrote.',
    registers: [this.registry],
  });

  readonly lastUsedBatch = new Histogram({
    name: 'tokend_last_used_batch_size',
    help: 'Token uses written per last_updated batch.',
    buckets: [1, 2, 5, 10, 25, 50, 100, 250, 500, 1000, 2500, 5000, 10000],
    registers: [this.registry],
  });

  readonly tokensExpired = new Counter({
    name: 'tokend_tokens_expired_deleted_total',
    help: 'Expired tokens deleted by the expiry sweep.',
    registers: [this.registry],
  });

  readonly eventsPublished = new Counter({
    name: 'tokend_events_published_total',
    help: 'Revocations and privilege changes published on the Redis events channel (a re-sent event counts again).',
    registers: [this.registry],
  });

  readonly eventsDropped = new Counter({
    name: 'tokend_events_dropped_total',
    help: 'Events deleted from the outbox unpublished, a day after their change (Redis unreachable all that time).',
    registers: [this.registry],
  });

  constructor() {
    // How long the event loop was held at worst: how late a 10 ms timer fired, reset at each scrape.
    // (perf_hooks' monitorEventLoopDelay records the timer's own period, not a long hold.)
    let lastTick = performance.now();
    let worstMs = 0;
    this.loopTimer = setInterval(() => {
      const now = performance.now();
      worstMs = Math.max(worstMs, now - lastTick - LOOP_TICK_MS);
      lastTick = now;
    }, LOOP_TICK_MS).unref();
    new Gauge({
      name: 'tokend_event_loop_delay_max_seconds',
      help: 'The longest the event loop was held (how late a 10 ms timer fired at worst) since the last scrape.',
      registers: [this.registry],
      collect() {
        this.set(Math.max(0, worstMs) / 1000);
        worstMs = 0;
      },
    });
    for (const outcome of Object.values(LOGIN_OUTCOME)) this.loginAttempts.inc({ outcome }, 0);
    for (const via of ['api', 'web']) this.tokensCreated.inc({ via }, 0);
    const readPool = () => this.poolStats?.();
    new Gauge({
      name: 'tokend_db_pool_connections',
      help:
        'Database pool connections by pool (main; lookup: the credential lookup) and state (total, idle, ' +
        'in_use), waiting queries and the maximum.',
      labelNames: ['pool', 'state'] as const,
      registers: [this.registry],
      collect() {
        for (const [pool, stats] of Object.entries(readPool() ?? {})) {
          this.set({ pool, state: 'total' }, stats.total);
          this.set({ pool, state: 'idle' }, stats.idle);
          this.set({ pool, state: 'in_use' }, stats.total - stats.idle);
          this.set({ pool, state: 'waiting' }, stats.waiting);
          this.set({ pool, state: 'max' }, stats.max);
        }
      },
    });
  }

  private readonly loopTimer: ReturnType<typeof setInterval>;

  /** Stops the event-loop timer (the app's close). */
  close(): void {
    clearInterval(this.loopTimer);
  }

  /** Where pool figures come from; without one (SQLite) the gauge has no series. */
  observePool(stats: Store['poolStats']): void {
    this.poolStats = stats;
  }

  loginAttempt(kind: LoginResult['kind']): void {
    this.loginAttempts.inc({ outcome: LOGIN_OUTCOME[kind] });
    if (kind === 'created') this.tokensCreated.inc({ via: 'api' });
  }

  request(method: string, route: string | undefined, code: number, seconds: number): void {
    this.httpDuration.observe({ method, route: route ?? UNMATCHED_ROUTE, code: String(code) }, seconds);
  }
}

/** The background work whose figures the metrics report. */
export interface Observed {
  jobs: { onFixed: ((rows: number, statements: number) => void) | undefined };
  lastUsed: { onFlush: ((size: number) => void) | undefined };
  expiry: {
    onSwept: ((deleted: number) => void) | undefined;
    onEventsDropped: ((dropped: number) => void) | undefined;
  };
  store: Pick<Store, 'poolStats'>;
  events: EventSink;
}

/** Points the background services' callbacks at the metrics. */
export function observeServices(metrics: TokendMetrics, services: Observed): void {
  services.jobs.onFixed = (rows) => {
    metrics.fixPrivilegesRuns.inc();
    metrics.fixPrivilegesRows.inc(rows);
  };
  services.lastUsed.onFlush = (size) => metrics.lastUsedBatch.observe(size);
  services.expiry.onSwept = (deleted) => metrics.tokensExpired.inc(deleted);
  services.expiry.onEventsDropped = (dropped) => metrics.eventsDropped.inc(dropped);
  if (services.events instanceof OutboxEvents)
    services.events.onPublished = () => metrics.eventsPublished.inc();
  if (services.store.poolStats) metrics.observePool(services.store.poolStats);
}
