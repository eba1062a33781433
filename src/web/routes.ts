// /login and /logout, the pages' icon, and how every page reports an error.
import { clientGone } from '../http/client-address.ts';
import type { FastifyError, FastifyInstance, FastifyReply, FastifyRequest } from 'fastify';
import { endSession, SESSION_TTL_S } from '../auth/sessions.ts';
import { errorPage, loginPage, notFoundPage, signedInPage, sendPage, type LoginView } from './pages.ts';
import { DOCUMENT_SECURITY_HEADERS } from '../http/security-headers.ts';
import { webLogin } from './login.ts';
import { FAVICON_PATH, FAVICON_SVG } from './theme.ts';
import type { JsonSchemaToTsProvider } from '@fastify/type-provider-json-schema-to-ts';
import { loginQuery, signInForm } from './forms.ts';
import {
  LEGACY_PASSWORD_HELP,
  clearSessionCookie,
  csrfToken,
  localPath,
  sessionUser,
  setSessionCookie,
  webAct,
  type WebDeps,
} from './session.ts';

const MAX_FIELD = 1024;

/** Route options that describe a page in the API reference (which puts it in its section by its address). */
const pageDoc = (summary: string) => ({ schema: { summary } });

/** The icon's own answer: an image that may be cached for a day, and that runs and loads nothing. */
export function sendIcon(_request: FastifyRequest, reply: FastifyReply) {
  return reply
    .header('Content-Type', 'image/svg+xml')
    .header('Cache-Control', 'public, max-age=86400')
    .header('Content-Security-Policy', "default-src 'none'; frame-ancestors 'none'")
    .send(FAVICON_SVG);
}

/** The error handler of the pages: a short explanation, never the inside of a failure. */
export function sendPageError(err: FastifyError, request: FastifyRequest, reply: FastifyReply) {
  if (err.code === 'FST_CSRF_MISSING_SECRET' || err.code === 'FST_CSRF_INVALID_TOKEN')
    return sendPage(
      reply,
      403,
      'Error',
      errorPage(
        'This form has expired or was not sent from this site.',
        'Go back, reload the page and try again.',
      ),
    );
  const status = err.statusCode ?? 500;
  if (status >= 400 && status < 500) return sendPage(reply, status, 'Error', errorPage(err.message));
  request.log.error({ err }, 'page failed');
  return sendPage(reply, 500, 'Error', errorPage('An internal error occurred. Please try again later.'));
}

/**
 * A browser's page for an address that has none (outside the API's base path, which keeps its JSON 404):
 * the pages' look and headers, and the way back to the token page.
 */
export function sendNotFoundPage(_request: FastifyRequest, reply: FastifyReply) {
  reply.headers(DOCUMENT_SECURITY_HEADERS).header('X-Real-404', 'yes').header('Vary', 'Accept');
  return sendPage(reply, 404, 'Not found', notFoundPage());
}

/** What the sign-in page says to a browser that has just been signed out (`?signed_out=`). */
const SIGNED_OUT: Readonly<Record<string, string>> = {
  '1': 'You have signed out.',
  everywhere:
    'You have signed out everywhere: every session, connected application and API token of yours has ended.',
};

export async function webRoutes(
  untyped: FastifyInstance,
  deps: WebDeps,
  continuesTo: (next: string) => Promise<string | undefined> = async () => undefined,
): Promise<void> {
  const app = untyped.withTypeProvider<JsonSchemaToTsProvider>();
  // Every page links the icon; a browser also asks /favicon.ico of any site by itself.
  app.get(FAVICON_PATH, { schema: { hide: true } }, sendIcon);
  app.get('/favicon.ico', { schema: { hide: true } }, sendIcon);

  async function showLogin(
    request: FastifyRequest,
    reply: FastifyReply,
    status: number,
    view: Omit<LoginView, 'csrf' | 'serverName' | 'continuesTo'>,
  ) {
    const app = view.next === undefined ? undefined : await continuesTo(view.next);
    return sendPage(
      reply,
      status,
      'Sign in',
      loginPage({
        ...view,
        csrf: csrfToken(request, reply),
        serverName: reply.serverName,
        ...(app === undefined ? {} : { continuesTo: app }),
      }),
    );
  }

  app.get(
    '/login',
    { schema: { ...pageDoc('The sign-in page').schema, querystring: loginQuery } },
    async (request, reply) => {
      const next = localPath(request.query.next);
      const signedOut = request.query.signed_out;
      const user = await sessionUser(deps, request);
      // An application asked for a new sign-in: the form, the username filled in (the new sign-in
      // replaces this browser's session).
      if (user && next && request.query.again !== undefined)
        return showLogin(request, reply, 200, {
          next,
          notice: 'The application asks you to sign in again.',
          username: user.username,
        });
      if (user && next) return reply.redirect(next, 303);
      if (user)
        return sendPage(
          reply,
          200,
          'Signed in',
          signedInPage({ username: user.username, csrf: csrfToken(request, reply) }),
        );
      const notice =
        typeof signedOut === 'string' && Object.hasOwn(SIGNED_OUT, signedOut)
          ? SIGNED_OUT[signedOut]
          : undefined;
      return showLogin(request, reply, 200, notice === undefined ? { next } : { next, notice });
    },
  );

  app.post(
    '/login',
    {
      schema: { ...pageDoc('Sign in (the form)').schema, body: signInForm },
      preHandler: app.csrfProtection,
    },
    async (request, reply) => {
      const form = request.body ?? {};
      const username = form.username?.trim() ?? '';
      const password = form.password ?? '';
      const next = localPath(form.next);
      // Every refusal but an empty or too long username is about the password (the username is kept).
      const again = (status: number, error: string, errorField: LoginView['errorField'] = 'password') =>
        showLogin(request, reply, status, { next, error, errorField, username });
      if (username === '' || password === '')
        return again(
          422,
          'Enter your username and your password.',
          username === '' ? 'username' : 'password',
        );
      if (username.length > MAX_FIELD || password.length > MAX_FIELD)
        return again(
          400,
          'The username or password is too long.',
          username.length > MAX_FIELD ? 'username' : 'password',
        );

      const result = await webLogin(
        deps,
        { username, password },
        webAct(deps, request, undefined),
        clientGone(request),
      );
      switch (result.kind) {
        case 'bad-credentials':
          return again(403, 'Wrong username or password.');
        case 'rate-limited':
          reply.header('Retry-After', String(result.retryAfterS));
          return again(429, `Too many sign-in attempts. Try again in ${result.retryAfterS} seconds.`);
        case 'legacy-password':
          return again(403, LEGACY_PASSWORD_HELP);
        case 'banned':
          return again(403, 'This account is banned.');
        case 'busy':
          reply.header('Retry-After', String(result.retryAfterS));
          return again(503, 'The server is busy. Try again in a moment.');
        case 'signed-in': {
          // A new sign-in in a browser that had a session (signing in again) ends the one it replaces.
          const replaced = await sessionUser(deps, request);
          if (replaced) await endSession(deps.db, replaced, webAct(deps, request, replaced));
          setSessionCookie(request, reply, result.secret, SESSION_TTL_S);
          // Without a page to go back to, the account's own page: the token page.
          return reply.redirect(next ?? '/tokens', 303);
        }
      }
    },
  );

  app.post('/logout', { ...pageDoc('Sign out'), preHandler: app.csrfProtection }, async (request, reply) => {
    const user = await sessionUser(deps, request);
    if (user) await endSession(deps.db, user, webAct(deps, request, user));
    clearSessionCookie(request, reply);
    return reply.redirect('/login?signed_out=1', 303);
  });
}
