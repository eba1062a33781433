// One token's actions: revoke it, regenerate it (a new secret and id in its place, with the expiry kept or
// chosen anew, in sudo mode), each behind a confirmation page, or edit it (its description and privileges,
// under the same secret, in sudo mode).
import type { FastifyInstance, FastifyReply, FastifyRequest, preHandlerAsyncHookHandler } from 'fastify';
import type { JsonSchemaToTsProvider } from '@fastify/type-provider-json-schema-to-ts';
import { TOKEN_PRIVILEGE_DESCRIPTIONS, type TokenPrivilegeName } from '../../auth/privileges.ts';
import { inSudoMode } from '../../auth/sessions.ts';
import { TokenCapReached } from '../../auth/mint.ts';
import { withEvents } from '../../auth/security-log.ts';
import { messagePage, sendAccountPage } from '../../web/account-pages.ts';
import { editTokenForm, regenerateTokenForm, tokenIdParams } from './forms.ts';
import { requireSession, requireSudo, signedInUser, sudoOrRefuse } from '../../web/hooks.ts';
import { keepForReveal } from '../../web/reveal.ts';
import { csrfToken, webAct } from '../../web/session.ts';
import { deletePublicTokenOfUser, type PageToken } from '../repository.ts';
import { regenerateToken } from '../regenerate.ts';
import { editToken } from '../edit.ts';
import { createForm, type CreateField, type ExpiryInput } from './create-form-view.ts';
import { customDateRange, expiryChoices, formExpiry } from './expiry.ts';
import { formPrivileges, grantable } from './list.ts';
import {
  TOKENS_SESSION,
  noSuchToken,
  ownToken,
  parseTokenId,
  revealOwner,
  rowView,
  tooManyMade,
} from './context.ts';
import { KEEP_EXPIRY, regeneratePage, revokePage } from './token-actions-view.ts';

declare module 'fastify' {
  interface FastifyRequest {
    /** the user's own token a token action's path names (`loadOwnToken`) */
    ownToken: PageToken | null;
  }
}

const describePrivilege = (name: string): string =>
  Object.hasOwn(TOKEN_PRIVILEGE_DESCRIPTIONS, name)
    ? TOKEN_PRIVILEGE_DESCRIPTIONS[name as TokenPrivilegeName].full
    : name;

export async function tokenActionRoutes(untyped: FastifyInstance): Promise<void> {
  const app = untyped.withTypeProvider<JsonSchemaToTsProvider>();
  const { store, lastUsed, metrics, config, tokenCreation } = app.tokend;
  const web = app.web;
  app.decorateRequest('ownToken', null);
  const signedIn = requireSession(TOKENS_SESSION);

  /** Loads the signed-in user's live token the path's id names; otherwise the page says there is none. */
  const loadOwnToken: preHandlerAsyncHookHandler = async (request, reply) => {
    const { id } = request.params as { id: string };
    const token = await ownToken(store.db, signedInUser(request), id, request.now);
    if (!token) return noSuchToken(reply);
    request.ownToken = token;
  };
  const theToken = (request: FastifyRequest): PageToken => {
    if (request.ownToken === null) throw new Error('a token action without loadOwnToken');
    return request.ownToken;
  };

  app.get(
    '/tokens/:id/revoke',
    { schema: { hide: true, params: tokenIdParams }, preHandler: [signedIn, loadOwnToken] },
    async (request, reply) =>
      sendAccountPage(
        reply,
        200,
        'Revoke token',
        revokePage({
          csrf: csrfToken(request, reply),
          token: rowView(lastUsed, theToken(request)),
          now: request.now,
          describe: describePrivilege,
        }),
      ),
  );

  app.post(
    '/tokens/:id/revoke',
    { schema: { hide: true, params: tokenIdParams }, preHandler: [app.csrfProtection, signedIn] },
    async (request, reply) => {
      const user = signedInUser(request);
      const id = parseTokenId(request.params.id);
      const deleted =
        id !== undefined &&
        (await deletePublicTokenOfUser(store.db, user.userId, id, webAct(web, request, user), 'page'));
      if (!deleted || id === undefined) return noSuchToken(reply);
      lastUsed.forget(id);
      return reply.redirect('/tokens?revoked=1', 303);
    },
  );

  /**
   * The regeneration's confirmation page (again with an error: a refused password, or an expiry that cannot
   * be, with what was chosen).
   */
  const showRegenerate = (
    request: FastifyRequest,
    reply: FastifyReply,
    status: number,
    error?: string,
    expiry?: ExpiryInput,
  ) =>
    sendAccountPage(
      reply,
      status,
      'Regenerate token',
      regeneratePage({
        csrf: csrfToken(request, reply),
        token: rowView(lastUsed, theToken(request)),
        now: request.now,
        describe: describePrivilege,
        needsPassword:
          (error !== undefined && expiry === undefined) ||
          !inSudoMode(signedInUser(request), request.now, config.sudoWindowS),
        ...(error === undefined ? {} : { error }),
        expiry: {
          expiryChoices: expiryChoices(),
          dateRange: customDateRange(request.now),
          ...(expiry === undefined ? {} : { expiry }),
          ...(error !== undefined && expiry !== undefined ? { error, errorField: 'expiry' as const } : {}),
        },
      }),
    );

  /** The edit page (again after a refusal, with what was sent and the field it is about). */
  const showEdit = (
    request: FastifyRequest,
    reply: FastifyReply,
    status: number,
    sent?: { description: string; checked: ReadonlySet<string>; error: string; errorField?: CreateField },
  ) => {
    const user = signedInUser(request);
    const token = theToken(request);
    const held = new Set(rowView(lastUsed, token).privilegeNames);
    return sendAccountPage(
      reply,
      status,
      'Edit token',
      createForm({
        csrf: csrfToken(request, reply),
        choices: grantable(user.userPrivileges).map(({ name, bit }) => ({
          name,
          bit,
          checked: sent ? sent.checked.has(name) : held.has(name),
          description: TOKEN_PRIVILEGE_DESCRIPTIONS[name].full,
        })),
        expiryChoices: [],
        dateRange: { min: '', max: '' },
        description: sent?.description ?? token.description,
        needsPassword: sent?.errorField === 'password' || !inSudoMode(user, request.now, config.sudoWindowS),
        editing: { tokenId: token.id },
        ...(sent === undefined
          ? {}
          : { error: sent.error, ...(sent.errorField === undefined ? {} : { errorField: sent.errorField }) }),
      }),
    );
  };

  app.get(
    '/tokens/:id/edit',
    { schema: { hide: true, params: tokenIdParams }, preHandler: [signedIn, loadOwnToken] },
    async (request, reply) => showEdit(request, reply, 200),
  );

  app.post(
    '/tokens/:id/edit',
    {
      schema: { hide: true, params: tokenIdParams, body: editTokenForm },
      preHandler: [app.csrfProtection, signedIn, loadOwnToken],
    },
    async (request, reply) => {
      const user = signedInUser(request);
      const token = theToken(request);
      const form = request.body ?? {};
      const description = form.description?.trim() ?? '';
      const names = form.privileges === undefined ? [] : [form.privileges].flat();
      const checked = new Set(names);
      const again = (error: string, errorField: CreateField | undefined, status = 400) =>
        showEdit(request, reply, status, {
          description,
          checked,
          error,
          ...(errorField ? { errorField } : {}),
        });
      // The privileges the page offers are those the user may give; anything else is a forged form.
      const asked = formPrivileges(user.userPrivileges, [...checked]);
      if ('refused' in asked) return again(asked.refused, 'privileges');
      const { privileges } = asked;
      // Sudo mode, as for making a token: what a credential may do changes.
      const sudo = await sudoOrRefuse(request, reply, form.confirm_password, {
        home: TOKENS_SESSION.home,
        refuse: (_request, _reply, refusal) =>
          again(refusal.error ?? 'Enter your password to change the token.', 'password', refusal.status),
      });
      if (!sudo) return reply;
      const result = await editToken(store.db, {
        layout: store.layout,
        tokenId: token.id,
        userId: user.userId,
        description,
        privileges,
        now: request.now,
        act: webAct(web, request, user, request.now),
      });
      if (result.kind === 'not-found') return noSuchToken(reply);
      if (result.kind === 'bad-description')
        return again(`The description ${result.problem}.`, 'description');
      return reply.redirect('/tokens?edited=1', 303);
    },
  );

  app.get(
    '/tokens/:id/regenerate',
    { schema: { hide: true, params: tokenIdParams }, preHandler: [signedIn, loadOwnToken] },
    async (request, reply) => showRegenerate(request, reply, 200),
  );

  app.post(
    '/tokens/:id/regenerate',
    {
      schema: { hide: true, params: tokenIdParams, body: regenerateTokenForm },
      // Sudo mode, as for creating a token: the new secret is a new credential.
      preHandler: [
        app.csrfProtection,
        signedIn,
        loadOwnToken,
        requireSudo({
          home: TOKENS_SESSION.home,
          refuse: (request, reply, refusal) =>
            showRegenerate(
              request,
              reply,
              refusal.status,
              refusal.error ?? 'Enter your password to regenerate the token.',
            ),
        }),
      ],
    },
    async (request, reply) => {
      const user = signedInUser(request);
      const old = theToken(request);
      const form = request.body ?? {};
      const choice = form.expires_in ?? KEEP_EXPIRY;
      const expiry: ExpiryInput = { choice, date: form.expires_on?.trim() ?? '' };
      let expiresAt: number | null | undefined;
      if (choice !== KEEP_EXPIRY) {
        const chosen = formExpiry(expiry, request.now);
        if ('error' in chosen) return showRegenerate(request, reply, 400, chosen.error, expiry);
        expiresAt = chosen.expiresAt ?? null;
      }
      const waitForCreation = await tokenCreation.admit(user.userId);
      if (waitForCreation !== undefined) return tooManyMade(reply, 'Regenerate token', waitForCreation);
      const now = request.now;
      let regenerated: Awaited<ReturnType<typeof regenerateToken>>;
      try {
        const act = webAct(web, request, user, now);
        regenerated = await withEvents(store.db, act, async (trx) => {
          const done = await regenerateToken(trx, {
            layout: store.layout,
            userId: user.userId,
            tokenId: old.id,
            now,
            cap: config.tokensPerUserMax,
            act,
            ...(expiresAt === undefined ? {} : { expiresAt }),
          });
          if (done)
            await keepForReveal(trx, revealOwner(request, user), done.token.id, done.token.secret, now);
          return done;
        });
      } catch (err) {
        if (!(err instanceof TokenCapReached)) throw err;
        return sendAccountPage(
          reply,
          409,
          'Regenerate token',
          messagePage(
            'Too many tokens',
            `You hold more tokens than allowed (${err.max}). Revoke some before regenerating one.`,
          ),
        );
      }
      if (!regenerated) return noSuchToken(reply);
      lastUsed.forget(regenerated.replaced);
      metrics.tokensCreated.inc({ via: 'web' });
      request.log.info(
        { userId: user.userId, replaced: regenerated.replaced, tokenId: regenerated.token.id },
        'token regenerated',
      );
      return reply.redirect(`/tokens?created=${regenerated.token.id}`, 303);
    },
  );
}
