// The web: sign-in and sign-out, the token page and connected applications, in one encapsulated plugin
// with one form parser, one CSRF registration, one error page and the pages' security headers. Other
// modules' pages (the OAuth consent page) are registered inside it through `pages`, so they share those
// and the web session; nothing here knows what they are.
import type { FastifyInstance } from 'fastify';
import formbody from '@fastify/formbody';
import csrf from '@fastify/csrf-protection';
import { useDocumentHeaders } from '../http/security-headers.ts';
import { sendPageError, webRoutes } from './routes.ts';
import { CSRF_BINDING_KEY, csrfBinding, type WebDeps } from './session.ts';
import { tokensPageRoutes, type TokensPageOptions } from '../tokens/pages/tokens-page.ts';

/** Routes of another module that are web pages: they get the web's context and session rules. */
export type WebPages = (pages: FastifyInstance, web: WebDeps) => Promise<void>;

export interface WebPluginOptions extends TokensPageOptions {
  pages?: readonly WebPages[];
}

export async function webPlugin(app: FastifyInstance, options: WebPluginOptions): Promise<void> {
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
  useDocumentHeaders(app);
  await app.register(formbody);
  await app.register(csrf, {
    cookieOpts: { path: '/', sameSite: 'lax', httpOnly: true },
    getUserInfo: csrfBinding,
    csrfOpts: { hmacKey: CSRF_BINDING_KEY },
  });
  app.setErrorHandler(sendPageError);
  await webRoutes(app, web);
  await tokensPageRoutes(app, web, options);
  for (const add of options.pages ?? []) await app.register(async (pages) => add(pages, web));
}
