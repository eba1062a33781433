// Builds the Fastify app in a fixed order: external plugins, tokend's services, then routes.
import Fastify, { type FastifyInstance, type FastifyServerOptions, type RouteOptions } from 'fastify';
import cookie from '@fastify/cookie';
import type { Config } from './config.ts';
import { openStore, type Store } from './store/database.ts';
import { PasswordHasher } from './users/passwords.ts';
import { createLoginLimiter, limiterSettings, type LoginLimiter } from './auth/login-limiter.ts';
import { LastUsedBatcher } from './auth/last-used.ts';
import { FixPrivilegesRuns } from './tokens/fix-privileges.ts';
import { nowSeconds, type Clock } from './auth/clock.ts';
import { tokenRoutes } from './tokens/routes.ts';
import { pingRoutes } from './users/ping-route.ts';
import { credentialCore, type CredentialCore } from './auth/credentials.ts';
import { identityPlugin } from './http/plugin.ts';
import { apiSecurityHeaders } from './http/security-headers.ts';
import { authorizationPages, authorizationServer } from './oauth/plugin.ts';
import { applicationPages } from './oauth/pages/applications-page.ts';
import { bearerTokens } from './oauth/bearer.ts';
import { SigningKeys } from './oauth/signing-keys.ts';
import { applicationContinuedTo } from './oauth/clients.ts';
import { AJV_OPTIONS, lazySchemaController } from './http/schema-compilers.ts';
import { apiNotFound, makeErrorHandler, rootNotFound } from './http/errors.ts';
import { readBodies, readEveryBodyAsJson } from './http/bodies.ts';
import { presentEnvelope } from './http/presentation.ts';
import { normalizeTarget } from './http/slashes.ts';
import { AccessLog, logDestination, loggerOptions, requestIdFor, requestLogger } from './http/logging.ts';
import { ExpirySweeper } from './tokens/expiry.ts';
import { TokendMetrics, observeServices } from './metrics/metrics.ts';
import { metricsPlugin, requestMetrics } from './metrics/plugin.ts';
import { docsPath, registerDocs } from './docs/plugin.ts';
import { webPlugin } from './web/plugin.ts';
import { tokensPages } from './tokens/pages/plugin.ts';
import { securityLogPages } from './security-log/security-log-page.ts';
import { sendNotFoundPage } from './web/routes.ts';
import { DEFAULT_READY_TIMEOUT_MS, healthRoutes, type ReadinessCheck } from './health/routes.ts';
import {
  answerClientError,
  answerFrameworkError,
  answerHalfClosedClients,
  capConnectionsPerAddress,
} from './http/connections.ts';
import { redisReadiness } from './health/redis-check.ts';
import { trustFunction } from './trust-proxy.ts';
import { canonicalAddress } from './http/client-address.ts';
import { FailedSignIns, NO_EVENTS, eventsChannel, type EventSink } from './auth/security-log.ts';
import { OutboxEvents } from './auth/event-outbox.ts';
import { TokenCreationLimit } from './auth/creation-limit.ts';

export interface Services {
  config: Config;
  /** The clock the credential core, the expiry sweeps and the OAuth server read (tests move it). */
  clock: Clock;
  store: Store;
  passwords: PasswordHasher;
  loginLimiter: LoginLimiter;
  lastUsed: LastUsedBatcher;
  credentials: CredentialCore;
  jobs: FixPrivilegesRuns;
  metrics: TokendMetrics;
  expiry: ExpirySweeper;
  /**
   * where revocations and privilege changes are published: the outbox, drained to Redis after each commit,
   * with REDIS_URL; else nowhere
   */
  events: EventSink;
  /** the cap on failed sign-ins the security log records per address */
  failedSignIns: FailedSignIns;
  /** this instance's copy of the OpenID Connect signing keys (src/oauth/signing-keys.ts) */
  signingKeys: SigningKeys;
  /** the bound on API tokens a user makes per window (TOKEN_CREATE_RATE_LIMIT) */
  tokenCreation: TokenCreationLimit;
}

declare module 'fastify' {
  interface FastifyInstance {
    tokend: Services;
  }
}

export interface BuildOptions {
  /** An open store to use instead of opening config.database (tests; the CLI). Closed with the app. */
  store?: Store;
  /** Replaces the in-memory login limiter (e.g. one backed by Redis). */
  loginLimiter?: LoginLimiter;
  logger?: FastifyServerOptions['logger'];
  /** Told about every route as it is added (the API document's generator, bin/openapi.ts; tests). */
  onRoute?: (route: RouteOptions) => void;
  /** Replaces the clock (Unix seconds) of the credential core, the expiry sweeps and the OAuth server. */
  clock?: Clock;
}

export async function buildApp(config: Config, options: BuildOptions = {}): Promise<FastifyInstance> {
  const app = Fastify({
    logger: options.logger ?? { ...loggerOptions(config.logLevel), stream: logDestination() },
    // Whose X-Forwarded-For/-Proto/-Host count: a function for every TRUST_PROXY form (a bare number
    // would make Fastify trust no proxy at all).
    trustProxy: trustFunction(config.trustProxy),
    bodyLimit: config.bodyLimit,
    ajv: AJV_OPTIONS,
    // Each route's validators and serializers are compiled on its first request, not at start-up.
    schemaController: lazySchemaController,
    routerOptions: { ignoreTrailingSlash: true, maxParamLength: 200 },
    // `/api/v1//tokens` and `/api/v1/tokens/./self` are `/api/v1/tokens…`, as in the Ripple family
    // (src/http/slashes.ts).
    rewriteUrl: (request) => normalizeTarget(request.url ?? '/'),
    return503OnClosing: false,
    // An incoming X-Request-Id is kept only when short and safe (see requestIdFor); it tags every log line.
    requestIdHeader: false,
    genReqId: requestIdFor,
    childLoggerFactory: requestLogger,
    // One access line per request at info, instead of Fastify's two (AccessLog).
    logController: new AccessLog(config.accessLog),
    // Abuse limits (SECURITY.md): slow or oversized requests are cut off; config.ts has the defaults.
    connectionTimeout: config.http.connectionTimeoutMs,
    requestTimeout: config.http.requestTimeoutMs,
    keepAliveTimeout: config.http.keepAliveTimeoutMs,
    maxRequestsPerSocket: config.http.maxRequestsPerSocket,
    http: {
      maxHeaderSize: config.http.maxHeaderSize,
      headersTimeout: config.http.headersTimeoutMs,
      // How often Node looks for requests past their deadlines.
      connectionsCheckingInterval: Math.min(1000, config.http.headersTimeoutMs),
    },
    clientErrorHandler: answerClientError,
    frameworkErrors: answerFrameworkError,
  });
  capConnectionsPerAddress(app.server, config.http.maxConnectionsPerIp);
  answerHalfClosedClients(app.server);
  if (options.onRoute) app.addHook('onRoute', options.onRoute);

  const store =
    options.store ??
    (await openStore(config.database, { poolSize: config.dbPoolSize, timeoutMs: config.dbTimeoutMs }));
  const lastUsed = new LastUsedBatcher(store.db, app.log, canonicalAddress);
  const clock = options.clock ?? nowSeconds;
  const loginLimiter = options.loginLimiter ?? (await createLoginLimiter(limiterSettings(config), app.log));
  // Published over the login limits' Redis link: no second connection.
  const redisLink = loginLimiter.redis;
  const outbox = redisLink
    ? new OutboxEvents(store.db, redisLink, eventsChannel(config.redisKeyPrefix), app.log)
    : undefined;
  const events: EventSink = outbox ?? NO_EVENTS;
  const services: Services = {
    config,
    clock,
    store,
    passwords: new PasswordHasher({
      cost: config.bcryptCost,
      concurrency: config.bcryptConcurrency,
      maxQueued: config.passwordQueueMax,
    }),
    loginLimiter,
    lastUsed,
    credentials: credentialCore({ store, clock, lastUsed, bearerTokens }),
    jobs: new FixPrivilegesRuns(app.log),
    metrics: new TokendMetrics(),
    expiry: new ExpirySweeper(store.db, app.log, clock, { events, days: config.securityLogDays }),
    events,
    failedSignIns: new FailedSignIns(),
    signingKeys: new SigningKeys(store.db, clock, config.signingKeySecrets),
    tokenCreation: new TokenCreationLimit(
      loginLimiter,
      config.tokenCreateRate.points,
      config.tokenCreateRate.windowS,
    ),
  };
  app.decorate('tokend', services);
  // The name every page shows (src/web/layout.ts reads it from the reply it answers with).
  app.decorateReply('serverName', config.serverName);
  observeServices(services.metrics, services);
  lastUsed.start(config.lastUsedFlushMs);
  services.expiry.start(config.tokenSweepIntervalS * 1000);
  outbox?.start();
  app.addHook('onClose', async () => {
    await services.jobs.idle();
    await services.expiry.stop();
    await lastUsed.stop();
    // What waits is published now, while the database and Redis are still open.
    await outbox?.stop();
    await store.close();
    await services.loginLimiter.close();
  });

  readBodies(app);

  await app.register(apiSecurityHeaders);
  await app.register(cookie);
  await app.register(identityPlugin, { credentials: services.credentials, publicUrl: config.publicUrl });

  app.setErrorHandler(makeErrorHandler(config.bodyLimit));
  // With an empty BASE_PATH the API is at the root, and its not-found handler (below) is the server's.
  // A browser opening an unknown address outside it gets the web's HTML 404 page instead.
  if (config.basePath !== '') app.setNotFoundHandler(rootNotFound(config.basePath, sendNotFoundPage));

  // Before every route: metrics count each route. Without METRICS_TOKEN nothing can read the counts
  // (/metrics answers 404), so no request pays for them (a CPU profile of the read showed the histogram's
  // label hashing: bench/HISTORY.md).
  if (config.metricsToken !== undefined) await app.register(requestMetrics, { metrics: services.metrics });
  await registerDocs(app, config.basePath);
  await app.register(metricsPlugin, { metrics: services.metrics, token: config.metricsToken });

  const readinessChecks: ReadinessCheck[] = [{ name: 'database', check: () => store.ping() }];
  if (redisLink) readinessChecks.push(redisReadiness(redisLink));
  await app.register(healthRoutes, { checks: readinessChecks, timeoutMs: DEFAULT_READY_TIMEOUT_MS });

  await app.register(
    async (api) => {
      api.addHook('onSend', presentEnvelope);
      readEveryBodyAsJson(api);
      // A path that exists with other methods is a 405 with Allow; any other is the 404 with X-Real-404.
      const methods = new Set<string>();
      api.addHook('onRoute', (route) => {
        for (const method of [route.method].flat()) methods.add(method);
      });
      api.setNotFoundHandler(apiNotFound(methods, config.basePath));
      await api.register(
        async (v1) => {
          await v1.register(tokenRoutes);
          await v1.register(pingRoutes);
        },
        { prefix: '/v1' },
      );
    },
    { prefix: config.basePath },
  );
  // The OAuth 2.0 authorization server's metadata and back channel, at the server root.
  await app.register(authorizationServer);
  // The web pages, at the server root, in one context: the page kit (sign-in and sign-out among it), then
  // each feature's pages beside it, each in a context of its own.
  await app.register(async (site) => {
    await site.register(webPlugin, {
      // The sign-in page names the application an authorization request continues to.
      continuesTo: (next) => applicationContinuedTo(store.db, next),
    });
    await site.register(securityLogPages);
    await site.register(tokensPages, { apiReference: docsPath(config.basePath) });
    await site.register(authorizationPages);
    await site.register(applicationPages, { apiReference: docsPath(config.basePath) });
  });

  return app;
}
