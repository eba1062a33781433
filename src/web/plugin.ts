// The page kit, registered once in the context that serves the pages (app.ts), where each feature then
// registers its own pages beside it: one form parser, one CSRF registration, one error page, the pages'
// security headers, the web session's dependencies (`app.web`), one reading of the clock per request
// (`request.now`); and what the kit serves itself: sign-in and sign-out, the icon, and the account pages'
// stylesheet and script. Nothing here knows which pages there are.
import fp from 'fastify-plugin';
import type { FastifyInstance } from 'fastify';
import formbody from '@fastify/formbody';
import csrf from '@fastify/csrf-protection';
import { useDocumentHeaders } from '../http/security-headers.ts';
import { sendPageError, webRoutes } from './routes.ts';
import { CSRF_BINDING_KEY, csrfBinding, type WebDeps } from './session.ts';
import { serveAssets } from './assets.ts';
import { ACCOUNT_SCRIPT, ACCOUNT_STYLESHEET } from './account-pages.ts';

declare module 'fastify' {
  interface FastifyInstance {
    /** what the pages' session rules need (in the context of the pages) */
    web: WebDeps;
  }
  interface FastifyRequest {
    /** the time of a page's request (Unix seconds): its one reading of the clock */
    now: number;
  }
}

export interface WebKitOptions {
  /**
   * The name of what a sign-in continues to, from its `next` page (an application's authorization
   * request), for the sign-in page to say so; undefined: nothing to name. Given by app.ts: the kit knows no
   * feature.
   */
  continuesTo?: (next: string) => Promise<string | undefined>;
}

async function webKit(app: FastifyInstance, options: WebKitOptions): Promise<void> {
  const { store, passwords, loginLimiter, credentials, config, clock, events, failedSignIns } = app.tokend;
  const web: WebDeps = {
    db: store.db,
    passwords,
    loginLimiter,
    credentials,
    sudoWindowS: config.sudoWindowS,
    clock,
    events,
    failedSignIns,
  };
  app.decorate('web', web);
  app.decorateRequest('now', 0);
  app.decorateRequest('signedIn', null);
  app.addHook('onRequest', (request, _reply, done) => {
    request.now = clock();
    done();
  });
  useDocumentHeaders(app);
  await app.register(formbody);
  await app.register(csrf, {
    cookieOpts: { path: '/', sameSite: 'lax', httpOnly: true },
    getUserInfo: csrfBinding,
    csrfOpts: { hmacKey: CSRF_BINDING_KEY },
  });
  app.setErrorHandler(sendPageError);
  await webRoutes(app, web, options.continuesTo);
  serveAssets(app, [ACCOUNT_STYLESHEET, ACCOUNT_SCRIPT]);
}

/** The page kit, in the context it is registered in (not a context of its own). */
export const webPlugin = fp<WebKitOptions>(webKit, { name: 'tokend-web', dependencies: ['@fastify/cookie'] });
