// POST /tokens: the creation form. The form's own checks first (description, privileges, expiry), then
// sudo mode, the bound on tokens made per window and the cap; the token and its secret's one showing are
// stored together, and the answer is a redirect to the page that shows the secret.
import type { FastifyInstance } from 'fastify';
import type { JsonSchemaToTsProvider } from '@fastify/type-provider-json-schema-to-ts';
import { TokenCapReached, mintToken, type MintedToken } from '../../auth/mint.ts';
import { createTokenForm } from './forms.ts';
import { requireSession, signedInUser, sudoOrRefuse } from '../../web/hooks.ts';
import { keepForReveal } from '../../web/reveal.ts';
import { webAct } from '../../web/session.ts';
import { descriptionProblem } from '../description.ts';
import { TOKENS_SESSION, revealOwner, tooManyMade } from './context.ts';
import { formExpiry } from './expiry.ts';
import { formPrivileges, type ShowTokens } from './list.ts';
import type { CreateField, ExpiryInput } from './create-form-view.ts';

export async function createRoute(untyped: FastifyInstance, showTokens: ShowTokens): Promise<void> {
  const app = untyped.withTypeProvider<JsonSchemaToTsProvider>();
  const { store, metrics, config, tokenCreation } = app.tokend;
  const web = app.web;
  app.post(
    '/tokens',
    {
      schema: { hide: true, body: createTokenForm },
      preHandler: [app.csrfProtection, requireSession(TOKENS_SESSION)],
    },
    async (request, reply) => {
      const user = signedInUser(request);
      const now = request.now;
      const form = request.body ?? {};
      const description = form.description?.trim() ?? '';
      const names = form.privileges === undefined ? [] : [form.privileges].flat();
      const checked = new Set(names);
      const expiry: ExpiryInput = { choice: form.expires_in ?? '', date: form.expires_on?.trim() ?? '' };
      const again = (error: string, errorField?: CreateField, status = 400, needsPassword?: true) =>
        showTokens(request, reply, user, status, {
          error,
          ...(errorField === undefined ? {} : { errorField }),
          description,
          checked,
          expiry,
          ...(needsPassword ? { needsPassword } : {}),
        });

      const descriptionRefused = descriptionProblem(description, store.layout);
      if (descriptionRefused !== undefined)
        return again(`The description ${descriptionRefused}.`, 'description');
      const asked = formPrivileges(user.userPrivileges, [...checked]);
      if ('refused' in asked) return again(asked.refused, 'privileges');
      const { privileges } = asked;

      const expires = formExpiry(expiry, now);
      if ('error' in expires) return again(expires.error, 'expiry');

      // Sudo mode: making a token needs a recent password entry.
      const sudo = await sudoOrRefuse(request, reply, form.confirm_password, {
        home: TOKENS_SESSION.home,
        refuse: (_request, _reply, refusal) =>
          again(refusal.error ?? 'Enter your password to create a token.', 'password', refusal.status, true),
      });
      if (!sudo) return reply;

      const waitForCreation = await tokenCreation.admit(user.userId);
      if (waitForCreation !== undefined) return tooManyMade(reply, 'Create token', waitForCreation);
      let token: MintedToken;
      try {
        // The token and its secret's one showing are stored together: a token is never made without it.
        token = await store.db.transaction().execute(async (trx) => {
          const minted = await mintToken(trx, {
            layout: store.layout,
            userId: user.userId,
            requested: privileges,
            description,
            private: false,
            now,
            expiresAt: expires.expiresAt,
            cap: config.tokensPerUserMax,
            act: webAct(web, request, user, now),
          });
          await keepForReveal(trx, revealOwner(request, user), minted.id, minted.secret, now);
          return minted;
        });
      } catch (err) {
        if (!(err instanceof TokenCapReached)) throw err;
        return again(
          `You already have the most tokens allowed (${err.max}). Revoke some before creating another.`,
          undefined,
          409,
        );
      }
      metrics.tokensCreated.inc({ via: 'web' });
      // Answered by a redirect, so that reloading the page it lands on makes no second token.
      return reply.redirect(`/tokens?created=${token.id}`, 303);
    },
  );
}
