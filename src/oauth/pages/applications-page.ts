// "Your applications" (/applications): a signed-in user registers OAuth applications, sees each one's
// client id and users, changes its name, redirect URIs and avatar, makes a new secret and deletes it.
// Every change needs sudo mode and the pages' CSRF token. Another user's application is answered as an
// unknown id. A secret is shown in the answer to the POST that made it, once: it is never stored
// readable anywhere (the database keeps its hash), so no later page can show it again.
import type { FastifyInstance, FastifyReply, FastifyRequest } from 'fastify';
import type { JsonSchemaToTsProvider } from '@fastify/type-provider-json-schema-to-ts';
import { inSudoMode } from '../../auth/sessions.ts';
import { firstValue } from '../../http/first-value.ts';
import { clientParams, sudoForm } from '../../web/forms.ts';
import { applicationForm, applicationQuery, applicationsQuery, rotateSecretForm } from './forms.ts';
import { webAct, csrfToken } from '../../web/session.ts';
import {
  requireSession,
  requireSudo,
  signedInUser,
  sudoOrRefuse,
  type SessionRule,
  type SudoRefusal,
} from '../../web/hooks.ts';
import {
  ClientLimitReached,
  ClientValidationError,
  DuplicateClientName,
  createClient,
  deleteClient,
  listClientsOfOwner,
  rotateClientSecret,
  updateClient,
} from '../clients.ts';
import { countClientsOfOwner } from '../repository.ts';
import { serveAssets } from '../../web/assets.ts';
import { keepSecretForPage, revealOwner, takeSecretForPage } from '../../web/reveal.ts';
import { issuerOf } from '../endpoints/metadata.ts';
import {
  APPLICATIONS_STYLESHEET,
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
import { loadOwnApplication, notFound, ownApplication, summaryOf } from './own-application.ts';

const HIDDEN = { hide: true } as const;

/** The redirect URIs of the form's text: one per line, blank lines left out. */
const redirectUrisOf = (text: string): string[] =>
  text
    .split(/\r?\n/)
    .map((line) => line.trim())
    .filter((line) => line !== '');

/** The pages' sign-in rule: back to /applications; a banned user's applications do not work. */
const APPLICATIONS_SESSION: SessionRule = {
  home: '/applications',
  banned: (reply) =>
    sendApplicationsPage(
      reply,
      403,
      'Banned',
      applicationsMessage('Account banned', 'This account is banned: its applications do not work.'),
    ),
};

/** A form that needs sudo mode on these pages: refused, it comes back through `refuse`. */
const sudoRule = (
  refuse: (request: FastifyRequest, reply: FastifyReply, refusal: SudoRefusal) => unknown,
) => ({
  home: APPLICATIONS_SESSION.home,
  refuse,
});

/** What an application's secret, waiting for its one showing, is bound to. */
const secretSubject = (clientId: string): string => `application ${clientId}`;

export interface ApplicationPagesOptions {
  /** the address of the API reference page, which the pages link for developers */
  apiReference: string;
}

export async function applicationPages(
  untyped: FastifyInstance,
  options: ApplicationPagesOptions,
): Promise<void> {
  const app = untyped.withTypeProvider<JsonSchemaToTsProvider>();
  const { config } = app.tokend;
  const developers = (request: FastifyRequest) => ({
    issuer: issuerOf(request, config.publicUrl),
    apiReference: options.apiReference,
  });
  const web = app.web;
  const { db } = web;
  const max = config.oauthClientsPerUserMax;
  app.decorateRequest('ownApplication', null);
  serveAssets(app, [APPLICATIONS_STYLESHEET]);
  const signedIn = requireSession(APPLICATIONS_SESSION);
  const owned = loadOwnApplication();

  const needsPassword = (request: FastifyRequest) =>
    !inSudoMode(signedInUser(request), request.now, config.sudoWindowS);

  app.get(
    '/applications',
    { schema: { ...HIDDEN, querystring: applicationsQuery }, preHandler: signedIn },
    async (request, reply) => {
      const user = signedInUser(request);
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
          developers: developers(request),
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

  app.get('/applications/new', { schema: HIDDEN, preHandler: signedIn }, async (request, reply) => {
    // At the maximum the form still shows, saying why it will be refused.
    const full = (await countClientsOfOwner(db, signedInUser(request).userId)) >= max;
    return showRegister(request, reply, 200, {
      values: { name: '', redirectUris: '', avatar: '', confidential: true },
      needsPassword: needsPassword(request),
      ...(full ? { error: new ClientLimitReached(max).message } : {}),
    });
  });

  app.post(
    '/applications/new',
    { schema: { ...HIDDEN, body: applicationForm }, preHandler: [app.csrfProtection, signedIn] },
    async (request, reply) => {
      const user = signedInUser(request);
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
          needsPassword: errorField === 'password' || needsPassword(request),
          error,
          ...(errorField === undefined ? {} : { errorField }),
        });
      if (form.type !== undefined && form.type !== 'public' && form.type !== 'confidential')
        return again(400, 'Choose whether the application is confidential or public.');
      const allowed = await sudoOrRefuse(
        request,
        reply,
        form.confirm_password,
        sudoRule((_request, _reply, refusal) =>
          again(
            refusal.status,
            refusal.error ?? 'Enter your password to register an application.',
            'password',
          ),
        ),
      );
      if (!allowed) return reply;
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
            now: request.now,
            max,
          },
          webAct(web, request, user, request.now),
        );
      } catch (err) {
        if (err instanceof ClientLimitReached) return again(409, err.message);
        if (err instanceof ClientValidationError)
          return again(err instanceof DuplicateClientName ? 409 : 400, capital(err.message), err.field);
        throw err;
      }
      request.log.info({ userId: user.userId, clientId: created.client.id }, 'application registered');
      // Answered by a redirect, so that a reload registers nothing again; the secret waits for the page it
      // leads to, which shows it once (a failure to keep it leaves the application, whose owner makes a
      // new secret on its page).
      if (created.secret !== undefined)
        await keepSecretForPage(
          db,
          revealOwner(request, user),
          secretSubject(created.client.id),
          created.secret,
          request.now,
        );
      return reply.redirect(`/applications/${encodeURIComponent(created.client.id)}?registered=1`, 303);
    },
  );

  function showApplication(
    request: FastifyRequest,
    reply: FastifyReply,
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
      needsPassword: extra.form?.errorField === 'password' || needsPassword(request),
    };
    return sendApplicationsPage(
      reply,
      status,
      application.name,
      applicationPage({
        csrf,
        developers: developers(request),
        application,
        form,
        ...(extra.notice === undefined ? {} : { notice: extra.notice }),
        ...(extra.secret === undefined ? {} : { secret: extra.secret }),
      }),
    );
  }

  app.get(
    '/applications/:client',
    {
      schema: { ...HIDDEN, params: clientParams, querystring: applicationQuery },
      preHandler: [signedIn, owned],
    },
    async (request, reply) => {
      const { application } = ownApplication(request);
      const registered = firstValue(request.query.registered) !== undefined;
      const rotated = firstValue(request.query.rotated) !== undefined;
      if (!registered && !rotated)
        return showApplication(
          request,
          reply,
          application,
          200,
          firstValue(request.query.saved) === undefined ? {} : { notice: 'Your changes are saved.' },
        );
      // After a registration or a new secret (303 here): the secret, if this session has not seen it yet.
      const secret = application.confidential
        ? await takeSecretForPage(
            db,
            revealOwner(request, signedInUser(request)),
            secretSubject(application.id),
            request.now,
          )
        : undefined;
      const done = registered
        ? `${application.name} is registered.`
        : firstValue(request.query.rotated) === 'ended'
          ? 'A new secret replaces the old one, and every token the application held has ended.'
          : 'A new secret replaces the old one, which no longer works.';
      const notice =
        secret === undefined && application.confidential
          ? `${done} Its secret was shown once already and cannot be shown again: if you did not copy it, make a new one below.`
          : done;
      return showApplication(request, reply, application, 200, {
        notice,
        ...(secret === undefined ? {} : { secret }),
      });
    },
  );

  /** The edit form's values as sent (the type stays what it is). */
  const editedValues = (request: FastifyRequest): FormValues => {
    const form = (request.body ?? {}) as { name?: string; redirect_uris?: string; avatar?: string };
    return {
      name: form.name ?? '',
      redirectUris: form.redirect_uris ?? '',
      avatar: (form.avatar ?? '').trim(),
      confidential: ownApplication(request).application.confidential,
    };
  };

  /** The application's page again with the edit form's values and an error. */
  const editAgain = (
    request: FastifyRequest,
    reply: FastifyReply,
    status: number,
    error: string,
    errorField?: FormView['errorField'],
  ) =>
    showApplication(request, reply, ownApplication(request).application, status, {
      form: { values: editedValues(request), error, ...(errorField === undefined ? {} : { errorField }) },
    });

  app.post(
    '/applications/:client',
    {
      schema: { ...HIDDEN, params: clientParams, body: applicationForm },
      preHandler: [
        app.csrfProtection,
        signedIn,
        owned,
        requireSudo(
          sudoRule((request, reply, refusal) =>
            editAgain(
              request,
              reply,
              refusal.status,
              refusal.error ?? 'Enter your password to save the changes.',
              'password',
            ),
          ),
        ),
      ],
    },
    async (request, reply) => {
      const user = signedInUser(request);
      const { application } = ownApplication(request);
      const values = editedValues(request);
      let changed: boolean;
      try {
        changed = await updateClient(db, user.userId, application.id, {
          name: values.name,
          redirectUris: redirectUrisOf(values.redirectUris),
          avatar: values.avatar,
        });
      } catch (err) {
        if (err instanceof ClientValidationError)
          return editAgain(
            request,
            reply,
            err instanceof DuplicateClientName ? 409 : 400,
            capital(err.message),
            err.field,
          );
        throw err;
      }
      if (!changed) return notFound(reply);
      return reply.redirect(`/applications/${encodeURIComponent(application.id)}?saved=1`, 303);
    },
  );

  const confidentialOnly = loadOwnApplication({ confidential: true });

  app.get(
    '/applications/:client/secret',
    { schema: { ...HIDDEN, params: clientParams }, preHandler: [signedIn, confidentialOnly] },
    async (request, reply) =>
      sendApplicationsPage(
        reply,
        200,
        'New client secret',
        rotatePage({
          csrf: csrfToken(request, reply),
          application: ownApplication(request).application,
          needsPassword: needsPassword(request),
        }),
      ),
  );

  app.post(
    '/applications/:client/secret',
    {
      schema: { ...HIDDEN, params: clientParams, body: rotateSecretForm },
      preHandler: [
        app.csrfProtection,
        signedIn,
        confidentialOnly,
        requireSudo(
          sudoRule((request, reply, refusal) =>
            sendApplicationsPage(
              reply,
              refusal.status,
              'New client secret',
              rotatePage({
                csrf: csrfToken(request, reply),
                application: ownApplication(request).application,
                needsPassword: true,
                passwordError: true,
                endTokens: (request.body as { end_tokens?: string } | undefined)?.end_tokens === 'yes',
                error: refusal.error ?? 'Enter your password to make a new secret.',
              }),
            ),
          ),
        ),
      ],
    },
    async (request, reply) => {
      const user = signedInUser(request);
      const { client, application } = ownApplication(request);
      const endTokens = request.body?.end_tokens === 'yes';
      const rotated = await rotateClientSecret(db, client, endTokens, webAct(web, request, user));
      if (!rotated) return notFound(reply);
      request.log.info(
        { userId: user.userId, clientId: client.id, endedTokens: rotated.ended },
        'application secret replaced',
      );
      await keepSecretForPage(
        db,
        revealOwner(request, user),
        secretSubject(client.id),
        rotated.secret,
        request.now,
      );
      return reply.redirect(
        `/applications/${encodeURIComponent(application.id)}?rotated=${endTokens ? 'ended' : '1'}`,
        303,
      );
    },
  );

  app.get(
    '/applications/:client/delete',
    { schema: { ...HIDDEN, params: clientParams }, preHandler: [signedIn, owned] },
    async (request, reply) =>
      sendApplicationsPage(
        reply,
        200,
        'Delete application',
        deletePage({
          csrf: csrfToken(request, reply),
          application: ownApplication(request).application,
          needsPassword: needsPassword(request),
        }),
      ),
  );

  app.post(
    '/applications/:client/delete',
    {
      schema: { ...HIDDEN, params: clientParams, body: sudoForm },
      preHandler: [
        app.csrfProtection,
        signedIn,
        owned,
        requireSudo(
          sudoRule((request, reply, refusal) =>
            sendApplicationsPage(
              reply,
              refusal.status,
              'Delete application',
              deletePage({
                csrf: csrfToken(request, reply),
                application: ownApplication(request).application,
                needsPassword: true,
                passwordError: true,
                error: refusal.error ?? 'Enter your password to delete the application.',
              }),
            ),
          ),
        ),
      ],
    },
    async (request, reply) => {
      const user = signedInUser(request);
      const { application } = ownApplication(request);
      if (!(await deleteClient(db, application.id, webAct(web, request, user)))) return notFound(reply);
      request.log.info({ userId: user.userId, clientId: application.id }, 'application deleted');
      return reply.redirect('/applications?deleted=1', 303);
    },
  );
}

/** A refusal's message as a sentence on the page. */
const capital = (message: string): string => `${message.charAt(0).toUpperCase()}${message.slice(1)}.`;
