// Sign out everywhere, from the token page: after a confirmation (a ticked box, and sudo mode), every
// session, connected application and API token of the user ends at once.
import type { FastifyInstance, FastifyReply, FastifyRequest } from 'fastify';
import type { JsonSchemaToTsProvider } from '@fastify/type-provider-json-schema-to-ts';
import { inSudoMode } from '../../auth/sessions.ts';
import { signOutEverywhere } from '../../auth/revocation.ts';
import { endGrantsOfUser } from '../../oauth/applications.ts';
import { type Html, html } from '../../web/html.ts';
import { csrfField, sendAccountPage } from '../../web/account-pages.ts';
import { signOutEverywhereForm } from './forms.ts';
import { requireSession, signedInUser, sudoOrRefuse } from '../../web/hooks.ts';
import { clearSessionCookie, confirmPasswordField, csrfToken, webAct } from '../../web/session.ts';
import { TOKENS_SESSION } from './context.ts';

export function signOutEverywherePage(view: { csrf: string; needsPassword: boolean; error?: string }): Html {
  return html`<h1>Sign out everywhere?</h1>
    <p>This ends, at once and for good:</p>
    <ul>
      <li>every session of yours, in every browser (this one too);</li>
      <li>the access of every connected application (their tokens stop working);</li>
      <li>every API token of yours, listed or not.</li>
    </ul>
    <p>Anything using them stops working. You then sign in again and make new tokens.</p>
    ${view.error ? html`<p class="error" role="alert">${view.error}</p>` : ''}
    <form method="post" action="/tokens/sign-out-everywhere">
      ${csrfField(view.csrf)}
      <p>
        <label><input type="checkbox" name="confirm" value="yes" required /> Yes, end all of them</label>
      </p>
      ${view.needsPassword ? confirmPasswordField() : ''}
      <div class="actions">
        <button type="submit" class="danger">Sign out everywhere</button>
        <a href="/tokens">Cancel</a>
      </div>
    </form>`;
}

export async function signOutEverywhereRoutes(untyped: FastifyInstance): Promise<void> {
  const app = untyped.withTypeProvider<JsonSchemaToTsProvider>();
  const { store, config } = app.tokend;
  const web = app.web;
  const signedIn = requireSession(TOKENS_SESSION);

  /** The confirmation page (again with an error); the password is asked for when sudo mode has lapsed. */
  const confirmation = (
    request: FastifyRequest,
    reply: FastifyReply,
    status: number,
    error?: string,
    needsPassword = !inSudoMode(signedInUser(request), request.now, config.sudoWindowS),
  ) =>
    sendAccountPage(
      reply,
      status,
      'Sign out everywhere',
      signOutEverywherePage({
        csrf: csrfToken(request, reply),
        needsPassword,
        ...(error === undefined ? {} : { error }),
      }),
    );

  app.get(
    '/tokens/sign-out-everywhere',
    { schema: { hide: true }, preHandler: signedIn },
    async (request, reply) => confirmation(request, reply, 200),
  );

  app.post(
    '/tokens/sign-out-everywhere',
    {
      schema: { hide: true, body: signOutEverywhereForm },
      preHandler: [app.csrfProtection, signedIn],
    },
    async (request, reply) => {
      const user = signedInUser(request);
      const form = request.body ?? {};
      if (form.confirm !== 'yes')
        return confirmation(
          request,
          reply,
          400,
          'Tick the box to confirm that every token and session should end.',
        );
      const sudo = await sudoOrRefuse(request, reply, form.confirm_password, {
        home: TOKENS_SESSION.home,
        refuse: (request, reply, refusal) =>
          confirmation(
            request,
            reply,
            refusal.status,
            refusal.error ?? 'Enter your password to sign out everywhere.',
            true,
          ),
      });
      if (!sudo) return reply;
      const ended = await signOutEverywhere(
        store.db,
        user.userId,
        endGrantsOfUser,
        webAct(web, request, user),
      );
      request.log.info({ userId: user.userId, ...ended }, 'signed out everywhere');
      clearSessionCookie(request, reply);
      return reply.redirect('/login?signed_out=everywhere', 303);
    },
  );
}
