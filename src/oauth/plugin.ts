// tokend's OAuth 2.0 authorization server, at the server root (outside BASE_PATH): its metadata and
// back channel here, and its consent page, which the web plugin registers among its pages.
import type { FastifyError, FastifyInstance } from 'fastify';
import formbody from '@fastify/formbody';
import { refuseOtherBodies } from '../http/bodies.ts';
import type { WebPages } from '../web/plugin.ts';
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
  });
}

/**
 * The front channel: the consent page, a web page among the others (registered inside the web plugin,
 * whose forms, CSRF protection and session it shares). An OAuth error is explained on a page.
 */
export const authorizationPages: WebPages = async (pages, web) => {
  const deps: ConsentPageDeps = { ...oauthDeps(pages), web };
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
};

const oauthDeps = (app: FastifyInstance): OAuthDeps => ({
  db: app.tokend.store.db,
  now: app.tokend.clock,
  publicUrl: app.tokend.config.publicUrl,
  grants: app.tokend.config.oauthGrants,
  credentials: app.tokend.credentials,
  events: app.tokend.events,
});

/** Removes expired OAuth rows now and then; sweeps never overlap and a failure is retried next time. */
function startSweeping(app: FastifyInstance, deps: OAuthDeps, intervalMs: number): void {
  const job = new PeriodicJob(async () => {
    try {
      const deleted = await deleteExpiredOAuthRows(deps.db, deps.now());
      if (deleted > 0) app.log.info({ deleted }, 'deleted expired OAuth codes and tokens');
    } catch (err) {
      app.log.error({ err }, 'deleting expired OAuth codes and tokens failed; will retry');
    }
  });
  job.start(intervalMs);
  app.addHook('onClose', () => job.stop());
}
