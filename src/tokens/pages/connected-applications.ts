// The applications that can act for the user, from the token page: revoke one's access (a confirmation,
// then every grant it holds for the user ends). The list itself is on the token page (list.ts).
import type { FastifyInstance, FastifyReply, FastifyRequest } from 'fastify';
import type { JsonSchemaToTsProvider } from '@fastify/type-provider-json-schema-to-ts';
import { connectedApplications, revokeApplication } from '../../oauth/applications.ts';
import { type Html, html } from '../../web/html.ts';
import { avatar } from '../../web/avatar.ts';
import { csrfField, messagePage, sendAccountPage, when } from '../../web/account-pages.ts';
import { clientParams } from '../../web/forms.ts';
import { requireSession, signedInUser } from '../../web/hooks.ts';
import { csrfToken, webAct } from '../../web/session.ts';
import { TOKENS_SESSION } from './context.ts';
import { applicationView } from './list.ts';
import { mayDo, type ApplicationView } from './list-view.ts';

export function revokeApplicationPage(view: {
  csrf: string;
  application: ApplicationView;
  now: number;
}): Html {
  const a = view.application;
  return html`<h1>Revoke access of ${a.name}?</h1>
    <div class="apps">${avatar(a.name, a.avatar, 40)}</div>
    <p>
      <strong>${a.name}</strong>: ${mayDo(a)}
      ${a.lastUsedAt === null ? 'It holds no live token for you.' : html`It last used its access ${when(a.lastUsedAt, view.now)}.`}
    </p>
    <p>
      Its access ends at once: every token it holds for you stops working, and it must ask for your approval
      again to act for you.
    </p>
    <form method="post" action="/tokens/applications/${encodeURIComponent(a.clientId)}/revoke">
      ${csrfField(view.csrf)}
      <div class="actions">
        <button type="submit" class="danger">Revoke access</button>
        <a href="/tokens">Cancel</a>
      </div>
    </form>`;
}

const noSuchApplication = (reply: FastifyReply) =>
  sendAccountPage(
    reply,
    404,
    'Not found',
    messagePage('No such application', 'No application with that id can act for your account.'),
  );

export async function connectedApplicationRoutes(untyped: FastifyInstance): Promise<void> {
  const app = untyped.withTypeProvider<JsonSchemaToTsProvider>();
  const { store } = app.tokend;
  const web = app.web;
  const signedIn = requireSession(TOKENS_SESSION);

  /** One of the applications that can act for the signed-in user, by client id. */
  async function connectedApplication(
    request: FastifyRequest,
    clientId: string,
  ): Promise<ApplicationView | undefined> {
    const user = signedInUser(request);
    const apps = await connectedApplications(store.db, user.userId, request.now, 1, clientId);
    const found = apps.applications[0];
    return found && applicationView(found);
  }

  app.get(
    '/tokens/applications/:client/revoke',
    { schema: { hide: true, params: clientParams }, preHandler: signedIn },
    async (request, reply) => {
      const application = await connectedApplication(request, request.params.client);
      if (!application) return noSuchApplication(reply);
      return sendAccountPage(
        reply,
        200,
        'Revoke access',
        revokeApplicationPage({ csrf: csrfToken(request, reply), application, now: request.now }),
      );
    },
  );

  app.post(
    '/tokens/applications/:client/revoke',
    { schema: { hide: true, params: clientParams }, preHandler: [app.csrfProtection, signedIn] },
    async (request, reply) => {
      const user = signedInUser(request);
      const revoked = await revokeApplication(
        store.db,
        user.userId,
        request.params.client,
        webAct(web, request, user),
      );
      if (!revoked) return noSuchApplication(reply);
      return reply.redirect('/tokens?disconnected=1', 303);
    },
  );
}
