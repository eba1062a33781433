// tokend's OAuth 2.0 authorization server and its web pages, at the server root (outside BASE_PATH).
// An encapsulated plugin: form parsing and CSRF protection exist only in here.
import type { FastifyInstance } from 'fastify';
import formbody from '@fastify/formbody';
import csrf from '@fastify/csrf-protection';
import { nowSeconds } from '../clock.ts';
import type { WebDeps } from '../web/session.ts';
import { sendPageError, webRoutes } from '../web/routes.ts';
import type { OAuthDeps } from './deps.ts';
import { authorizeGetEndpoint, authorizePostEndpoint } from './endpoints/authorize.ts';
import { introspectEndpoint } from './endpoints/introspect.ts';
import { metadataEndpoint } from './endpoints/metadata.ts';
import { revokeEndpoint } from './endpoints/revoke.ts';
import { tokenEndpoint } from './endpoints/token.ts';
import { deleteExpiredOAuthRows } from './repository.ts';
import { sendOAuthError } from './respond.ts';
import { doc } from './route-doc.ts';
import { useDocumentHeaders } from '../http/security-headers.ts';
import { PeriodicJob } from '../periodic.ts';

export async function authorizationServer(app: FastifyInstance): Promise<void> {
  const { store, passwords, loginLimiter, credentials } = app.tokend;
  const web: WebDeps = {
    db: store.db,
    dialect: store.dialect,
    passwords,
    loginLimiter,
    credentials,
    sudoWindowS: app.tokend.config.sudoWindowS,
  };
  const deps: OAuthDeps = {
    db: store.db,
    dialect: store.dialect,
    now: nowSeconds,
    web,
    publicUrl: app.tokend.config.publicUrl,
  };

  startSweeping(app, deps, app.tokend.config.tokenSweepIntervalS * 1000);

  await app.register(formbody);
  app.get(
    '/.well-known/oauth-authorization-server',
    doc('Authorization server metadata (RFC 8414)'),
    metadataEndpoint(app.tokend.config.publicUrl),
  );

  // Back channel: client to server, JSON answers and RFC 6749 §5.2 errors.
  await app.register(async (backChannel) => {
    backChannel.setErrorHandler(sendOAuthError);
    backChannel.post(
      '/oauth/token',
      doc('Exchange a code or refresh token (RFC 6749 §3.2)'),
      tokenEndpoint(deps),
    );
    backChannel.post('/oauth/revoke', doc('Revoke a token (RFC 7009)'), revokeEndpoint(deps));
    backChannel.post('/oauth/introspect', doc('Introspect a token (RFC 7662)'), introspectEndpoint(deps));
  });

  // Front channel: the browser's pages, CSRF-protected forms, errors as pages.
  await app.register(async (pages) => {
    useDocumentHeaders(pages);
    await pages.register(csrf, { cookieOpts: { path: '/', sameSite: 'lax', httpOnly: true } });
    pages.setErrorHandler(sendPageError);
    pages.get('/oauth/authorize', doc('The consent page (RFC 6749 §4.1.1)'), authorizeGetEndpoint(deps));
    pages.post(
      '/oauth/authorize',
      { ...doc('The consent form: Allow or Deny'), preHandler: pages.csrfProtection },
      authorizePostEndpoint(deps),
    );
    await webRoutes(pages, web);
  });
}

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
