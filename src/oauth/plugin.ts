// tokend's OAuth 2.0 authorization server, at the server root (outside BASE_PATH): its metadata and
// back channel here, and its consent and device pages, which app.ts registers among the pages.
import type { FastifyError, FastifyInstance } from 'fastify';
import formbody from '@fastify/formbody';
import { refuseOtherBodies } from '../http/bodies.ts';
import { sendPageError } from '../web/routes.ts';
import { errorPage, sendPage } from '../web/pages.ts';
import type { ConsentPageDeps, OAuthDeps, TokenEndpointDeps } from './deps.ts';
import { TokenLimits } from './token-limits.ts';
import { OAuthError } from './errors.ts';
import { authorizeGetEndpoint, authorizePostEndpoint } from './endpoints/authorize.ts';
import { introspectEndpoint } from './endpoints/introspect.ts';
import { metadataEndpoint } from './endpoints/metadata.ts';
import { revokeEndpoint } from './endpoints/revoke.ts';
import { tokenEndpoint } from './endpoints/token.ts';
import { deleteExpiredOAuthRows } from './repository.ts';
import { deleteExpiredDeviceCodes } from './device.ts';
import { DeviceLimits } from './device-limits.ts';
import { deviceAuthorizationEndpoint } from './endpoints/device-authorization.ts';
import { devicePages } from './pages/device-page.ts';
import { jwksEndpoint } from './endpoints/jwks.ts';
import { userinfoEndpoint } from './endpoints/userinfo.ts';
import { sendOAuthError } from './respond.ts';
import { doc } from './route-doc.ts';
import { PeriodicJob } from '../periodic.ts';

/** Metadata and the back channel (client to server): JSON answers and RFC 6749 §5.2 errors. */
export async function authorizationServer(app: FastifyInstance): Promise<void> {
  const deps: TokenEndpointDeps = {
    ...oauthDeps(app),
    limits: new TokenLimits(app.tokend.loginLimiter, app.tokend.config.oauthTokenRate),
  };
  startSweeping(app, deps, app.tokend.config.tokenSweepIntervalS * 1000);

  app.get(
    '/.well-known/oauth-authorization-server',
    doc('Authorization server metadata (RFC 8414)'),
    metadataEndpoint(app.tokend.config.publicUrl),
  );
  app.get(
    '/.well-known/openid-configuration',
    doc('OpenID Connect Discovery 1.0: the same metadata'),
    metadataEndpoint(app.tokend.config.publicUrl),
  );
  app.get('/oauth/jwks', doc('The keys that sign id_tokens (JWK Set)'), jwksEndpoint(deps.keys));
  await app.register(async (backChannel) => {
    // Clients send these endpoints forms (RFC 6749 §4.1.3), and any other body is refused as one.
    await backChannel.register(formbody);
    refuseOtherBodies(backChannel, 'application/x-www-form-urlencoded (RFC 6749)');
    backChannel.setErrorHandler(sendOAuthError);
    backChannel.post(
      '/oauth/token',
      doc('Exchange a code or refresh token (RFC 6749 §3.2)'),
      tokenEndpoint(deps),
    );
    backChannel.post('/oauth/revoke', doc('Revoke a token (RFC 7009)'), revokeEndpoint(deps));
    backChannel.post('/oauth/introspect', doc('Introspect a token (RFC 7662)'), introspectEndpoint(deps));
    backChannel.post(
      '/oauth/device_authorization',
      doc('Start a sign-in on a device (RFC 8628 §3.1)'),
      deviceAuthorizationEndpoint({ ...deps, deviceLimits: new DeviceLimits(app.tokend.loginLimiter) }),
    );
    const userinfo = userinfoEndpoint(deps);
    backChannel.get('/oauth/userinfo', doc('Who the access token acts for (OpenID Connect)'), userinfo);
    backChannel.post('/oauth/userinfo', doc('Who the access token acts for (OpenID Connect)'), userinfo);
  });
}

/**
 * The front channel: the consent and device pages, among the others (registered beside the page kit,
 * whose forms, CSRF protection and session they share). An OAuth error is explained on a page.
 */
export async function authorizationPages(pages: FastifyInstance): Promise<void> {
  const deps: ConsentPageDeps = { ...oauthDeps(pages), web: pages.web };
  pages.setErrorHandler((err: FastifyError | OAuthError, request, reply) => {
    if (!(err instanceof OAuthError)) return sendPageError(err, request, reply);
    if (err.status >= 500) request.log.error({ err }, 'authorization request failed');
    return sendPage(
      reply,
      err.status >= 500 ? 500 : 400,
      'Error',
      errorPage(err.expose ? err.message : 'An internal error occurred.'),
    );
  });
  pages.get('/oauth/authorize', doc('The consent page (RFC 6749 §4.1.1)'), authorizeGetEndpoint(deps));
  pages.post(
    '/oauth/authorize',
    { ...doc('The consent form: Allow or Deny'), preHandler: pages.csrfProtection },
    authorizePostEndpoint(deps),
  );
  await devicePages(pages, { ...deps, deviceLimits: new DeviceLimits(pages.tokend.loginLimiter) });
}

const oauthDeps = (app: FastifyInstance): OAuthDeps => ({
  db: app.tokend.store.db,
  now: app.tokend.clock,
  publicUrl: app.tokend.config.publicUrl,
  grants: app.tokend.config.oauthGrants,
  credentials: app.tokend.credentials,
  events: app.tokend.events,
  keys: app.tokend.signingKeys,
});

/** Removes expired OAuth rows now and then; sweeps never overlap and a failure is retried next time. */
function startSweeping(app: FastifyInstance, deps: OAuthDeps, intervalMs: number): void {
  const job = new PeriodicJob(async () => {
    try {
      const now = deps.now();
      const deleted =
        (await deleteExpiredOAuthRows(deps.db, now)) + (await deleteExpiredDeviceCodes(deps.db, now));
      if (deleted > 0) app.log.info({ deleted }, 'deleted expired OAuth codes and tokens');
      const keys = await deps.keys.sweep();
      if (keys > 0) app.log.info({ keys }, 'deleted signing keys whose id_tokens have expired');
    } catch (err) {
      app.log.error({ err }, 'deleting expired OAuth codes and tokens failed; will retry');
    }
  });
  job.start(intervalMs);
  app.addHook('onClose', () => job.stop());
}
