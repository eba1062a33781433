// "Your applications" (/applications): a signed-in user registers OAuth applications, sees each one's
// client id and users, changes its name, redirect URIs and avatar, makes a new secret and deletes it.
// Every change needs sudo mode and the pages' CSRF token. Another user's application is answered as an
// unknown id. A secret is shown in the answer to the POST that made it, once: it is never stored
// readable anywhere (the database keeps its hash), so no later page can show it again.
import type { FastifyInstance, FastifyReply, FastifyRequest } from 'fastify';
import type { JsonSchemaToTsProvider } from '@fastify/type-provider-json-schema-to-ts';
import { inSudoMode } from '../../auth/sessions.ts';
import { firstValue } from '../../http/first-value.ts';
import type { WebPages } from '../../web/plugin.ts';
import {
  applicationForm,
  applicationQuery,
  applicationsQuery,
  clientParams,
  rotateSecretForm,
  sudoForm,
} from '../../web/forms.ts';
import {
  clearSessionCookie,
  confirmSudo,
  webAct,
  csrfToken,
  pageUser,
  sudoRefusalStatus,
  type Session,
  type WebDeps,
} from '../../web/session.ts';
import {
  ClientLimitReached,
  ClientValidationError,
  DuplicateClientName,
  createClient,
  deleteClient,
  findOwnedClient,
  isConfidential,
  listClientsOfOwner,
  rotateClientSecret,
  updateClient,
  type OAuthClient,
} from '../clients.ts';
import { consentCounts, countClientsOfOwner } from '../repository.ts';
import {
  applicationPage,
  applicationsMessage,
  applicationsPage,
  deletePage,
  registerPage,
  rotatePage,
  sendApplicationsPage,
  type ApplicationSummary,
  type FormValues,
  type FormView,
} from './applications-page-view.ts';

const HIDDEN = { hide: true } as const;

/** The redirect URIs of the form's text: one per line, blank lines left out. */
const redirectUrisOf = (text: string): string[] =>
  text
    .split(/\r?\n/)
    .map((line) => line.trim())
    .filter((line) => line !== '');

export const applicationPages: WebPages = async (untyped: FastifyInstance, web: WebDeps) => {
  const app = untyped.withTypeProvider<JsonSchemaToTsProvider>();
  const { config, clock } = app.tokend;
  const { db } = web;
  const max = config.oauthClientsPerUserMax;

  /** The signed-in, not banned user; otherwise the reply has been sent (sign-in, or the ban's page). */
  const signedIn = (request: FastifyRequest, reply: FastifyReply) =>
    pageUser(web, request, reply, '/applications', (banned) =>
      sendApplicationsPage(
        banned,
        403,
        'Banned',
        applicationsMessage('Account banned', 'This account is banned: its applications do not work.'),
      ),
    );

  /** A session that ended while its password was being confirmed: back to sign-in. */
  function signedOut(request: FastifyRequest, reply: FastifyReply) {
    clearSessionCookie(request, reply);
    return reply.redirect('/login?next=%2Fapplications', 303);
  }

  const notFound = (reply: FastifyReply) =>
    sendApplicationsPage(
      reply,
      404,
      'Not found',
      applicationsMessage('No such application', 'You have no application with that client id.'),
    );

  /** The user's application named by the path, with its users counted; undefined for any other id. */
  async function owned(user: Session, id: string): Promise<ApplicationSummary | undefined> {
    return (await ownedClient(user, id))?.application;
  }

  async function ownedClient(
    user: Session,
    id: string,
  ): Promise<{ client: OAuthClient; application: ApplicationSummary } | undefined> {
    const client = await findOwnedClient(db, user.userId, id);
    if (!client) return undefined;
    const counts = await consentCounts(db, [client.id]);
    return { client, application: summaryOf(client, counts.get(client.id) ?? 0) };
  }

  const summaryOf = (client: OAuthClient, authorizedUsers: number): ApplicationSummary => ({
    id: client.id,
    name: client.name,
    avatar: client.avatar,
    redirectUris: client.redirectUris,
    confidential: isConfidential(client),
    authorizedUsers,
    created: client.created,
  });

  const needsPassword = (user: Session) => !inSudoMode(user, clock(), config.sudoWindowS);

  /** Whether a form may go ahead in sudo mode: yes, a refusal (its status and message), or signed out. */
  async function sudo(
    request: FastifyRequest,
    reply: FastifyReply,
    user: Session,
    password: string | undefined,
  ): Promise<{ go: true } | { go: false; status: number; error: string | undefined } | 'signed-out'> {
    const check = await confirmSudo(web, user, password, webAct(web, request, user, clock()));
    if (check.kind === 'signed-out') return 'signed-out';
    if (check.kind === 'ok') return { go: true };
    return { go: false, status: sudoRefusalStatus(reply, check), error: check.error };
  }

  app.get(
    '/applications',
    { schema: { ...HIDDEN, querystring: applicationsQuery } },
    async (request, reply) => {
      const user = await signedIn(request, reply);
      if (!user) return reply;
      const applications = (await listClientsOfOwner(db, user.userId)).map((c) =>
        summaryOf(c, c.authorizedUsers),
      );
      const deleted = firstValue(request.query.deleted) !== undefined;
      return sendApplicationsPage(
        reply,
        200,
        'Your applications',
        applicationsPage({
          username: user.username,
          csrf: csrfToken(request, reply),
          applications,
          max,
          ...(deleted
            ? { notice: 'The application was deleted: every token and approval of it ended.' }
            : {}),
        }),
      );
    },
  );

  const showRegister = (
    request: FastifyRequest,
    reply: FastifyReply,
    status: number,
    form: Omit<FormView, 'csrf'>,
  ) =>
    sendApplicationsPage(
      reply,
      status,
      'Register an application',
      registerPage({ ...form, csrf: csrfToken(request, reply) }),
    );

  app.get('/applications/new', { schema: HIDDEN }, async (request, reply) => {
    const user = await signedIn(request, reply);
    if (!user) return reply;
    // At the maximum the form still shows, saying why it will be refused.
    const full = (await countClientsOfOwner(db, user.userId)) >= max;
    return showRegister(request, reply, 200, {
      values: { name: '', redirectUris: '', avatar: '', confidential: true },
      needsPassword: needsPassword(user),
      ...(full ? { error: new ClientLimitReached(max).message } : {}),
    });
  });

  app.post(
    '/applications/new',
    { schema: { ...HIDDEN, body: applicationForm }, preHandler: app.csrfProtection },
    async (request, reply) => {
      const user = await signedIn(request, reply);
      if (!user) return reply;
      const form = request.body ?? {};
      const values: FormValues = {
        name: form.name ?? '',
        redirectUris: form.redirect_uris ?? '',
        avatar: (form.avatar ?? '').trim(),
        confidential: form.type !== 'public',
      };
      const again = (status: number, error: string, errorField?: FormView['errorField']) =>
        showRegister(request, reply, status, {
          values,
          needsPassword: errorField === 'password' || needsPassword(user),
          error,
          ...(errorField === undefined ? {} : { errorField }),
        });
      if (form.type !== undefined && form.type !== 'public' && form.type !== 'confidential')
        return again(400, 'Choose whether the application is confidential or public.');
      const allowed = await sudo(request, reply, user, form.confirm_password);
      if (allowed === 'signed-out') return signedOut(request, reply);
      if (!allowed.go)
        return again(
          allowed.status,
          allowed.error ?? 'Enter your password to register an application.',
          'password',
        );
      let created: Awaited<ReturnType<typeof createClient>>;
      try {
        created = await createClient(
          db,
          {
            name: values.name,
            redirectUris: redirectUrisOf(values.redirectUris),
            avatar: values.avatar,
            public: !values.confidential,
            ownerId: user.userId,
            now: clock(),
            max,
          },
          webAct(web, request, user),
        );
      } catch (err) {
        if (err instanceof ClientLimitReached) return again(409, err.message);
        if (err instanceof ClientValidationError)
          return again(err instanceof DuplicateClientName ? 409 : 400, capital(err.message), err.field);
        throw err;
      }
      request.log.info({ userId: user.userId, clientId: created.client.id }, 'application registered');
      return showApplication(request, reply, user, summaryOf(created.client, 0), 201, {
        notice: `${created.client.name} is registered.`,
        ...(created.secret === undefined ? {} : { secret: created.secret }),
      });
    },
  );

  function showApplication(
    request: FastifyRequest,
    reply: FastifyReply,
    user: Session,
    application: ApplicationSummary,
    status: number,
    extra: { notice?: string; secret?: string; form?: Omit<FormView, 'csrf' | 'needsPassword'> } = {},
  ) {
    const csrf = csrfToken(request, reply);
    const form: FormView = {
      values: {
        name: application.name,
        redirectUris: application.redirectUris.join('\n'),
        avatar: application.avatar,
        confidential: application.confidential,
      },
      ...extra.form,
      csrf,
      needsPassword: extra.form?.errorField === 'password' || needsPassword(user),
    };
    return sendApplicationsPage(
      reply,
      status,
      application.name,
      applicationPage({
        csrf,
        application,
        form,
        ...(extra.notice === undefined ? {} : { notice: extra.notice }),
        ...(extra.secret === undefined ? {} : { secret: extra.secret }),
      }),
    );
  }

  app.get(
    '/applications/:client',
    { schema: { ...HIDDEN, params: clientParams, querystring: applicationQuery } },
    async (request, reply) => {
      const user = await signedIn(request, reply);
      if (!user) return reply;
      const application = await owned(user, request.params.client);
      if (!application) return notFound(reply);
      return showApplication(
        request,
        reply,
        user,
        application,
        200,
        firstValue(request.query.saved) === undefined ? {} : { notice: 'Your changes are saved.' },
      );
    },
  );

  app.post(
    '/applications/:client',
    { schema: { ...HIDDEN, params: clientParams, body: applicationForm }, preHandler: app.csrfProtection },
    async (request, reply) => {
      const user = await signedIn(request, reply);
      if (!user) return reply;
      const application = await owned(user, request.params.client);
      if (!application) return notFound(reply);
      const form = request.body ?? {};
      const values: FormValues = {
        name: form.name ?? '',
        redirectUris: form.redirect_uris ?? '',
        avatar: (form.avatar ?? '').trim(),
        confidential: application.confidential,
      };
      const again = (status: number, error: string, errorField?: FormView['errorField']) =>
        showApplication(request, reply, user, application, status, {
          form: { values, error, ...(errorField === undefined ? {} : { errorField }) },
        });
      const allowed = await sudo(request, reply, user, form.confirm_password);
      if (allowed === 'signed-out') return signedOut(request, reply);
      if (!allowed.go)
        return again(allowed.status, allowed.error ?? 'Enter your password to save the changes.', 'password');
      let changed: boolean;
      try {
        changed = await updateClient(db, user.userId, application.id, {
          name: values.name,
          redirectUris: redirectUrisOf(values.redirectUris),
          avatar: values.avatar,
        });
      } catch (err) {
        if (err instanceof ClientValidationError)
          return again(err instanceof DuplicateClientName ? 409 : 400, capital(err.message), err.field);
        throw err;
      }
      if (!changed) return notFound(reply);
      return reply.redirect(`/applications/${encodeURIComponent(application.id)}?saved=1`, 303);
    },
  );

  app.get(
    '/applications/:client/secret',
    { schema: { ...HIDDEN, params: clientParams } },
    async (request, reply) => {
      const user = await signedIn(request, reply);
      if (!user) return reply;
      const application = await owned(user, request.params.client);
      if (!application?.confidential) return notFound(reply);
      return sendApplicationsPage(
        reply,
        200,
        'New client secret',
        rotatePage({ csrf: csrfToken(request, reply), application, needsPassword: needsPassword(user) }),
      );
    },
  );

  app.post(
    '/applications/:client/secret',
    { schema: { ...HIDDEN, params: clientParams, body: rotateSecretForm }, preHandler: app.csrfProtection },
    async (request, reply) => {
      const user = await signedIn(request, reply);
      if (!user) return reply;
      const found = await ownedClient(user, request.params.client);
      if (!found?.application.confidential) return notFound(reply);
      const { client, application } = found;
      const form = request.body ?? {};
      const endTokens = form.end_tokens === 'yes';
      const allowed = await sudo(request, reply, user, form.confirm_password);
      if (allowed === 'signed-out') return signedOut(request, reply);
      if (!allowed.go)
        return sendApplicationsPage(
          reply,
          allowed.status,
          'New client secret',
          rotatePage({
            csrf: csrfToken(request, reply),
            application,
            needsPassword: true,
            passwordError: true,
            endTokens,
            error: allowed.error ?? 'Enter your password to make a new secret.',
          }),
        );
      const rotated = await rotateClientSecret(db, client, endTokens, webAct(web, request, user));
      if (!rotated) return notFound(reply);
      request.log.info(
        { userId: user.userId, clientId: client.id, endedTokens: rotated.ended },
        'application secret replaced',
      );
      return showApplication(request, reply, user, application, 200, {
        notice: endTokens
          ? 'A new secret replaces the old one, and every token the application held has ended.'
          : 'A new secret replaces the old one, which no longer works.',
        secret: rotated.secret,
      });
    },
  );

  app.get(
    '/applications/:client/delete',
    { schema: { ...HIDDEN, params: clientParams } },
    async (request, reply) => {
      const user = await signedIn(request, reply);
      if (!user) return reply;
      const application = await owned(user, request.params.client);
      if (!application) return notFound(reply);
      return sendApplicationsPage(
        reply,
        200,
        'Delete application',
        deletePage({ csrf: csrfToken(request, reply), application, needsPassword: needsPassword(user) }),
      );
    },
  );

  app.post(
    '/applications/:client/delete',
    { schema: { ...HIDDEN, params: clientParams, body: sudoForm }, preHandler: app.csrfProtection },
    async (request, reply) => {
      const user = await signedIn(request, reply);
      if (!user) return reply;
      const application = await owned(user, request.params.client);
      if (!application) return notFound(reply);
      const allowed = await sudo(request, reply, user, request.body?.confirm_password);
      if (allowed === 'signed-out') return signedOut(request, reply);
      if (!allowed.go)
        return sendApplicationsPage(
          reply,
          allowed.status,
          'Delete application',
          deletePage({
            csrf: csrfToken(request, reply),
            application,
            needsPassword: true,
            passwordError: true,
            error: allowed.error ?? 'Enter your password to delete the application.',
          }),
        );
      if (!(await deleteClient(db, application.id, webAct(web, request, user)))) return notFound(reply);
      request.log.info({ userId: user.userId, clientId: application.id }, 'application deleted');
      return reply.redirect('/applications?deleted=1', 303);
    },
  );
};

/** A refusal's message as a sentence on the page. */
const capital = (message: string): string => `${message.charAt(0).toUpperCase()}${message.slice(1)}.`;
