// Builds the Fastify app in a fixed order: external plugins, tokend's services, then routes.
import Fastify, {
  type FastifyInstance,
  type FastifyRequest,
  type FastifyServerOptions,
  type RouteOptions,
} from 'fastify';
import cookie from '@fastify/cookie';
import type { Config } from './config.ts';
import { openStore, type Store } from './store/database.ts';
import { PasswordHasher } from './users/passwords.ts';
import { createLoginLimiter, limiterSettings, type LoginLimiter } from './auth/login-limiter.ts';
import { LastUsedBatcher } from './auth/last-used.ts';
import { FixPrivilegesRuns } from './tokens/fix-privileges.ts';
import { nowSeconds } from './clock.ts';
import { tokenRoutes } from './tokens/routes.ts';
import { pingRoutes } from './users/ping-route.ts';
import { credentialCore, type CredentialCore } from './auth/credentials.ts';
import { identityPlugin } from './http/plugin.ts';
import { apiSecurityHeaders } from './http/security-headers.ts';
import { authorizationPages, authorizationServer } from './oauth/plugin.ts';
import { loggerOptions } from './http/logging.ts';
import { AJV_OPTIONS, lazySchemaController } from './http/schema-compilers.ts';
import { HttpError, apiNotFound, makeErrorHandler, rootNotFound } from './http/errors.ts';
import { presentEnvelope } from './http/presentation.ts';
import { requestIdFor, requestLogger } from './http/logging.ts';
import { ExpirySweeper } from './tokens/expiry.ts';
import { TokendMetrics, observeServices } from './metrics/metrics.ts';
import { metricsPlugin, requestMetrics } from './metrics/plugin.ts';
import { registerDocs } from './docs/plugin.ts';
import { webPlugin } from './web/plugin.ts';
import { DEFAULT_READY_TIMEOUT_MS, healthRoutes, type ReadinessCheck } from './health/routes.ts';
import {
  answerClientError,
  answerFrameworkError,
  answerHalfClosedClients,
  capConnectionsPerAddress,
} from './http/connections.ts';
import { redisReadiness } from './health/redis-check.ts';

/** A Content-Type Fastify can read: `type/subtype`, optionally followed by `;` and parameters. */
const MEDIA_TYPE = /^\s*[\w!#$%&'*+.^`|~-]+\/[\w!#$%&'*+.^`|~-]+\s*(?:;|$)/;

export interface Services {
  config: Config;
  store: Store;
  passwords: PasswordHasher;
  loginLimiter: LoginLimiter;
  lastUsed: LastUsedBatcher;
  credentials: CredentialCore;
  jobs: FixPrivilegesRuns;
  metrics: TokendMetrics;
  expiry: ExpirySweeper;
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
  /** Told about every route as it is added (tests check the API document against this). */
  onRoute?: (route: RouteOptions) => void;
}

export async function buildApp(config: Config, options: BuildOptions = {}): Promise<FastifyInstance> {
  const app = Fastify({
    logger: options.logger ?? loggerOptions(config.logLevel),
    // Fastify accepts a hop count at run time; its types only list the other forms.
    trustProxy: config.trustProxy as false | string[],
    bodyLimit: config.bodyLimit,
    ajv: AJV_OPTIONS,
    // Each route's validators and serializers are compiled on its first request, not at start-up.
    schemaController: lazySchemaController,
    routerOptions: { ignoreTrailingSlash: true, maxParamLength: 200 },
    return503OnClosing: false,
    // An incoming X-Request-Id is kept only when short and safe (see requestIdFor); it tags every log line.
    requestIdHeader: false,
    genReqId: requestIdFor,
    childLoggerFactory: requestLogger,
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
  const lastUsed = new LastUsedBatcher(store.db, app.log);
  const services: Services = {
    config,
    store,
    passwords: new PasswordHasher({
      cost: config.bcryptCost,
      concurrency: config.bcryptConcurrency,
      maxQueued: config.passwordQueueMax,
    }),
    loginLimiter: options.loginLimiter ?? (await createLoginLimiter(limiterSettings(config), app.log)),
    lastUsed,
    credentials: credentialCore({ store, clock: nowSeconds, lastUsed }),
    jobs: new FixPrivilegesRuns(app.log),
    metrics: new TokendMetrics(),
    expiry: new ExpirySweeper(store.db, app.log, nowSeconds),
  };
  app.decorate('tokend', services);
  observeServices(services.metrics, services);
  lastUsed.start(config.lastUsedFlushMs);
  services.expiry.start(config.tokenSweepIntervalS * 1000);
  app.addHook('onClose', async () => {
    await services.jobs.idle();
    await services.expiry.stop();
    await lastUsed.stop();
    await store.close();
    await services.loginLimiter.close();
  });

  // Empty JSON bodies count as no body; __proto__ and constructor.prototype keys are refused; a body that
  // is not UTF-8 is refused too, instead of reaching a lookup with its bytes replaced by U+FFFD.
  app.removeContentTypeParser('application/json');
  const parseJson = app.getDefaultJsonParser('error', 'error');
  const utf8 = new TextDecoder('utf-8', { fatal: true });
  /** Reads a body as JSON; `badJson`, when given, replaces the message of a body that is not JSON. */
  const readJson =
    (badJson?: string) =>
    (request: FastifyRequest, body: string | Buffer, done: (err: Error | null, body?: unknown) => void) => {
      // A request no route takes gets its 404 or 405 whatever its body holds.
      if (request.is404) return done(null, undefined);
      let text: string;
      try {
        text = typeof body === 'string' ? body : utf8.decode(body);
      } catch {
        return done(new HttpError(400, 'Bad JSON: the body is not valid UTF-8.'), undefined);
      }
      if (text.trim() === '') return done(null, undefined);
      if (badJson === undefined) return parseJson(request, text, done);
      parseJson(request, text, (err, parsed) =>
        err ? done(new HttpError(400, badJson), undefined) : done(null, parsed),
      );
    };
  app.addContentTypeParser('application/json', { parseAs: 'buffer' }, readJson());
  // Outside {base_url} (health, metrics, the OAuth endpoints) any other body is a 415, not a string that
  // then fails the schema. An empty body counts as no body whatever its label (fetch() labels body '' as
  // text/plain, curl -d '' as a form). The form-based pages register their own, more specific parser for
  // forms in their contexts; {base_url} reads every body as JSON (below).
  app.removeContentTypeParser('text/plain');
  app.addContentTypeParser('*', { parseAs: 'buffer' }, (_request, body, done) => {
    if (body.length === 0 || body.toString('utf8').trim() === '') return done(null, undefined);
    done(new HttpError(415, 'Unsupported Content-Type: send the body as application/json.'), undefined);
  });

  await app.register(apiSecurityHeaders);
  await app.register(cookie);
  await app.register(identityPlugin, { credentials: services.credentials, publicUrl: config.publicUrl });

  app.setErrorHandler(makeErrorHandler(config.bodyLimit));
  // With an empty BASE_PATH the API is at the root, and its not-found handler (below) is the server's.
  if (config.basePath !== '') app.setNotFoundHandler(rootNotFound(config.basePath));

  // Before every route: metrics count each route, and the API document collects routes as they are added.
  await app.register(requestMetrics, { metrics: services.metrics });
  await registerDocs(app, config.basePath);
  await app.register(metricsPlugin, { metrics: services.metrics, token: config.metricsToken });

  const readinessChecks: ReadinessCheck[] = [{ name: 'database', check: () => store.ping() }];
  const redisLink = services.loginLimiter.redis;
  if (redisLink) readinessChecks.push(redisReadiness(redisLink));
  await app.register(healthRoutes, { checks: readinessChecks, timeoutMs: DEFAULT_READY_TIMEOUT_MS });

  await app.register(
    async (api) => {
      api.addHook('onSend', presentEnvelope);
      // Like the Ripple family's API, {base_url} reads a body as JSON whatever its Content-Type says: absent,
      // text/plain, a form (curl -d, Python requests' data=) or anything else. A label that is not even a
      // media type (`json`) is dropped first, or Fastify would refuse it with a 415 before any parser runs.
      api.addHook('onRequest', (request, _reply, done) => {
        const label = request.headers['content-type'];
        if (label !== undefined && !MEDIA_TYPE.test(label)) delete request.raw.headers['content-type'];
        done();
      });
      api.addContentTypeParser(
        '*',
        { parseAs: 'buffer' },
        readJson(
          'Bad JSON: the body is not valid JSON. The API reads every body as JSON, whatever its Content-Type.',
        ),
      );
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
  // The web pages, at the server root: sign-in, the token page, connected applications, and the
  // authorization server's consent page.
  await app.register(webPlugin, { pages: [authorizationPages] });

  return app;
}
