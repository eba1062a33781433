// The token page at /tokens (server root, after the web login): list, create and revoke the signed-in
// user's public tokens. Forms are CSRF-protected; everything works without JavaScript.
import type { FastifyInstance, FastifyReply, FastifyRequest } from 'fastify';
import {
  TOKEN_PRIVILEGE_DESCRIPTIONS,
  TokenPrivilege,
  limit,
  tokenPrivilegeNames,
  type TokenPrivilegeName,
} from '../../auth/privileges.ts';
import { COOKIE_NAME } from '../../http/credentials.ts';
import { serverOrigin } from '../../http/origin.ts';
import {
  clearSessionCookie,
  confirmSudo,
  csrfToken,
  pageUser,
  sudoRefusalStatus,
  webAct,
  type Session,
  type WebDeps,
} from '../../web/session.ts';
import { inSudoMode } from '../../auth/sessions.ts';
import { TokenCapReached, mintToken, type MintedToken } from '../../auth/mint.ts';
import { signOutEverywhere } from '../../auth/revocation.ts';
import { withEvents } from '../../auth/security-log.ts';
import type { ConnectedApplication, UserGrants } from '../../web/applications.ts';
import { regenerateToken } from '../regenerate.ts';
import {
  deletePublicTokenOfUser,
  findPageToken,
  listPageTokens,
  type PageOrder,
  type PageToken,
} from '../repository.ts';
import { keepForReveal, takeReveal, type RevealOwner } from '../../web/reveal.ts';
import { MAX_EXPIRES_IN_S } from '../expiry.ts';
import { descriptionProblem } from '../description.ts';
import { TOKENS_PER_PAGE, paginate } from '../pagination.ts';
import { MAX_ID } from '../../store/schema.ts';
import { integerInRange } from '../../decimal-integer.ts';
import { firstValue } from '../../http/first-value.ts';
import type { JsonSchemaToTsProvider } from '@fastify/type-provider-json-schema-to-ts';
import {
  clientParams,
  createTokenForm,
  signOutEverywhereForm,
  sudoForm,
  tokenIdParams,
  tokensPageQuery,
} from '../../web/forms.ts';
import {
  PAGE_SCRIPT,
  SCRIPT_PATH,
  messagePage,
  regeneratePage,
  revokeApplicationPage,
  revokePage,
  signOutEverywherePage,
  sendTokensPage,
  tokensPage,
  type ApplicationView,
  type CreateField,
  type CreatedToken,
  type ExpiryInput,
  type PrivilegeChoice,
  type TokenRowView,
  type TokensPageView,
} from './tokens-page-view.ts';
import { expiryLabel, timeFromNow } from '../../web/relative-time.ts';
import { securityLogRoutes } from '../../security-log/security-log-page.ts';

const DAY = 86_400;
/**
 * The expiry choices of the form, named by the rule the list uses ("In 1 month" is listed "in 1 month").
 * Made when a page is rendered, not at start-up: the first date formatter loads ICU's locale data (idle
 * memory that serving the API never needs).
 */
export const expiryChoices = (): ReadonlyArray<{ value: string; label: string }> => [
  { value: '', label: 'Never' },
  ...[DAY, 7 * DAY, 30 * DAY, 90 * DAY, 365 * DAY].map((s) => ({ value: String(s), label: expiryLabel(s) })),
];

/** A date of the form's custom expiry, YYYY-MM-DD in UTC. */
const utcDate = (at: number): string => new Date(at * 1000).toISOString().slice(0, 10);

/**
 * The dates the custom expiry may take: from today to the last day whose end is within MAX_EXPIRES_IN_S (a
 * custom date expires at the end of that day, UTC), the longest expiry a token may be given.
 */
export function customDateRange(now: number): { min: string; max: string } {
  const latestEnd = now + MAX_EXPIRES_IN_S;
  return { min: utcDate(now), max: utcDate(latestEnd - DAY) };
}

/**
 * The expiry a creation form asks for, in Unix seconds: undefined for never; an error when the choice is
 * not one of the list, or the date is not one of `customDateRange`.
 */
export function formExpiry(
  input: ExpiryInput,
  now: number,
): { expiresAt: number | undefined } | { error: string } {
  if (input.choice === '') return { expiresAt: undefined };
  if (input.choice === 'custom') {
    const m = /^(\d{4})-(\d{2})-(\d{2})$/.exec(input.date);
    const day = m ? Date.UTC(Number(m[1]), Number(m[2]) - 1, Number(m[3])) : Number.NaN;
    if (!m || Number.isNaN(day) || utcDate(day / 1000) !== input.date)
      return { error: 'Choose the date the token expires on (for example 2030-12-31).' };
    const expiresAt = day / 1000 + DAY; // the end of that day
    if (expiresAt <= now) return { error: 'Choose a date from today on: that one has passed.' };
    if (expiresAt - now > MAX_EXPIRES_IN_S)
      return { error: `Choose a date up to ${customDateRange(now).max}: a token expires within ten years.` };
    return { expiresAt };
  }
  const seconds = integerInRange(input.choice, 1, MAX_EXPIRES_IN_S);
  return seconds === undefined ? { error: 'Choose when the token expires.' } : { expiresAt: now + seconds };
}

const HIDDEN = { schema: { hide: true } } as const;

/** Privileges the user may put on a token, in table order (Read is never granted). */
function grantable(userPrivileges: number): Array<{ name: TokenPrivilegeName; bit: number }> {
  return (Object.entries(TokenPrivilege) as Array<[TokenPrivilegeName, number]>)
    .filter(([, bit]) => limit(bit, userPrivileges) === bit)
    .map(([name, bit]) => ({ name, bit }));
}

const parseTokenId = (raw: string): number | undefined => integerInRange(raw, 1, MAX_ID);

/** Connected applications listed on the page at most (the first by name); a note says how many there are. */
export const APPLICATIONS_SHOWN = 100;

const describePrivilege = (name: string): string =>
  Object.hasOwn(TOKEN_PRIVILEGE_DESCRIPTIONS, name)
    ? TOKEN_PRIVILEGE_DESCRIPTIONS[name as TokenPrivilegeName].full
    : name;

/** The order the list is in, from `?sort=`: by creation unless last use is asked for. */
const orderOf = (raw: unknown): PageOrder => (raw === 'last-used' ? 'last-used' : 'created');

/** What the token page needs of other modules. */
export interface TokensPageOptions {
  /** the token privileges an OAuth scope string carries (the authorization server's rule); absent: none */
  scopePrivileges?: (scope: string) => number;
  /** the OAuth server's grants of a user */
  grants: UserGrants;
  /** the address of the API reference page, which the page links to */
  apiReference: string;
}

/** A connected application as the page shows it: what it may do in a few words, from its scope's privileges. */
function applicationView(
  a: ConnectedApplication,
  scopePrivileges: (scope: string) => number,
): ApplicationView {
  return {
    clientId: a.clientId,
    name: a.name,
    avatar: a.avatar,
    // An operator's grant (`tokend client token`) has no approval, and no scope recorded here.
    abilities:
      a.approvedAt === null
        ? undefined
        : tokenPrivilegeNames(scopePrivileges(a.scope)).map(
            (n) => TOKEN_PRIVILEGE_DESCRIPTIONS[n as TokenPrivilegeName].short,
          ),
    approvedAt: a.approvedAt,
    lastUsedAt: a.lastUsedAt,
  };
}

/** The token page's routes, in the web plugin's context (its forms, CSRF protection and error pages). */
export async function tokensPageRoutes(
  untyped: FastifyInstance,
  web: WebDeps,
  options: TokensPageOptions,
): Promise<void> {
  const app = untyped.withTypeProvider<JsonSchemaToTsProvider>();
  const { store, lastUsed, metrics, config, clock, tokenCreation } = app.tokend;
  /** The answer when the user has made TOKEN_CREATE_RATE_LIMIT tokens this window (nothing is made). */
  const tooManyMade = (reply: FastifyReply, title: string, retryAfterS: number) =>
    sendTokensPage(
      reply.header('Retry-After', String(retryAfterS)),
      429,
      title,
      messagePage(
        'Too many new tokens',
        `You have made too many tokens recently. Try again ${timeFromNow(retryAfterS, 0)}; nothing was changed.`,
      ),
    );
  const scopePrivileges = options.scopePrivileges ?? (() => 0);
  const { grants } = options;

  const rowView = (t: PageToken): TokenRowView => {
    const pending = lastUsed.pendingUse(t.id);
    const used = pending !== undefined && pending > t.last_updated;
    return {
      id: t.id,
      description: t.description,
      privilegeNames: tokenPrivilegeNames(t.privileges),
      createdAt: t.created_at,
      lastUsed: used ? pending : t.never_used ? undefined : t.last_updated,
      lastAddress: (used ? lastUsed.pendingAddress(t.id) : undefined) ?? t.last_address ?? undefined,
      expiresAt: t.expires_at ?? undefined,
    };
  };

  /** The session a reveal belongs to: its row and the secret its cookie carries (which only the browser has). */
  const revealOwner = (request: FastifyRequest, user: Session): RevealOwner => ({
    sessionId: user.id,
    sessionSecret: String(request.cookies[COOKIE_NAME]),
  });

  /** A browser whose session ended: back to sign-in, its cookie cleared. */
  function signedOut(request: FastifyRequest, reply: FastifyReply) {
    clearSessionCookie(request, reply);
    return reply.redirect('/login?next=%2Ftokens', 303);
  }

  /** The signed-in, not banned user; otherwise the reply has already been sent. */
  const sessionOrSignIn = (request: FastifyRequest, reply: FastifyReply) =>
    pageUser(web, request, reply, '/tokens', (banned) =>
      sendTokensPage(banned, 403, 'Banned', messagePage('Account banned', 'This account is banned.')),
    );

  const noSuchToken = (reply: FastifyReply) =>
    sendTokensPage(reply, 404, 'Not found', messagePage('No such token', 'You have no token with that id.'));

  /** One of the user's live public tokens from a path's id, or undefined (then not found). */
  async function ownToken(user: Session, rawId: string, now: number): Promise<PageToken | undefined> {
    const id = parseTokenId(rawId);
    return id === undefined ? undefined : findPageToken(store.db, user.userId, id, now);
  }

  async function showTokens(
    request: FastifyRequest,
    reply: FastifyReply,
    user: Session,
    status: number,
    extra: Partial<TokensPageView> & { page?: number; checked?: ReadonlySet<string> } = {},
  ) {
    const page = extra.page ?? 1;
    const order = extra.order ?? 'created';
    const { limit: size, offset } = paginate(String(page), String(TOKENS_PER_PAGE));
    const now = clock();
    const rows = await listPageTokens(store.db, user.userId, { order, limit: size + 1, offset, now });
    const apps = await grants.connected(store.db, user.userId, now, APPLICATIONS_SHOWN);
    const choices: PrivilegeChoice[] = grantable(user.userPrivileges).map(({ name, bit }) => ({
      name,
      bit,
      checked: extra.checked?.has(name) ?? false,
      description: TOKEN_PRIVILEGE_DESCRIPTIONS[name].full,
    }));
    const view: TokensPageView = {
      ...extra,
      username: user.username,
      csrf: csrfToken(request, reply),
      tokens: rows.slice(0, size).map(rowView),
      now,
      order,
      choices,
      expiryChoices: expiryChoices(),
      dateRange: customDateRange(now),
      page,
      hasNext: rows.length > size,
      needsPassword: !inSudoMode(user, now, config.sudoWindowS),
      applicationsTotal: apps.total,
      applications: apps.applications.map((a) => applicationView(a, scopePrivileges)),
      usage: {
        exampleUrl: `${serverOrigin(request, config.publicUrl)}${config.basePath}/v1/tokens/self`,
        docsPath: options.apiReference,
      },
    };
    return sendTokensPage(reply, status, 'API tokens', tokensPage(view));
  }

  await securityLogRoutes(app, web, sessionOrSignIn);

  app.get(SCRIPT_PATH, HIDDEN, async (_request, reply) =>
    reply
      .header('Content-Type', 'application/javascript; charset=utf-8')
      .header('Cache-Control', 'no-cache')
      .send(PAGE_SCRIPT),
  );

  app.get('/tokens', { schema: { hide: true, querystring: tokensPageQuery } }, async (request, reply) => {
    const user = await sessionOrSignIn(request, reply);
    if (!user) return reply;
    const { page } = paginate(request.query.p, undefined);
    const order = orderOf(firstValue(request.query.sort));
    // After a creation or regeneration (303 here): the new secret, if this session has not seen it yet.
    let created: CreatedToken | undefined;
    let notice =
      request.query.revoked !== undefined
        ? 'The token was revoked.'
        : request.query.disconnected !== undefined
          ? 'The application was disconnected: its access to your account has ended.'
          : undefined;
    const createdText = firstValue(request.query.created);
    const createdId = createdText === undefined ? undefined : parseTokenId(createdText);
    if (createdId !== undefined) {
      const now = clock();
      const secret = await takeReveal(store.db, revealOwner(request, user), createdId, now);
      const token =
        secret === undefined ? undefined : await findPageToken(store.db, user.userId, createdId, now);
      if (secret !== undefined && token) {
        const { privilegeNames, expiresAt } = rowView(token);
        created = { id: token.id, secret, description: token.description, privilegeNames, expiresAt };
      } else
        notice =
          'The new token’s secret was shown once already and cannot be shown again. If you did not copy ' +
          'it, regenerate the token (or revoke it and create another).';
    }
    return showTokens(request, reply, user, 200, {
      page,
      order,
      ...(notice === undefined ? {} : { notice }),
      ...(created === undefined ? {} : { created }),
    });
  });

  const createOptions = { schema: { hide: true, body: createTokenForm }, preHandler: app.csrfProtection };
  app.post('/tokens', createOptions, async (request, reply) => {
    const user = await sessionOrSignIn(request, reply);
    if (!user) return reply;
    const form = request.body ?? {};
    const description = form.description?.trim() ?? '';
    const names = form.privileges === undefined ? [] : [form.privileges].flat();
    const checked = new Set(names);
    const expiry: ExpiryInput = { choice: form.expires_in ?? '', date: form.expires_on?.trim() ?? '' };
    const again = (error: string, errorField?: CreateField, status = 400) =>
      showTokens(request, reply, user, status, {
        error,
        ...(errorField === undefined ? {} : { errorField }),
        description,
        checked,
        expiry,
      });

    const descriptionRefused = descriptionProblem(description, store.layout);
    if (descriptionRefused !== undefined)
      return again(`The description ${descriptionRefused}.`, 'description');
    const allowed = new Map(grantable(user.userPrivileges).map((p) => [p.name as string, p.bit]));
    const refused = names.filter((n) => !allowed.has(n));
    if (refused.length > 0)
      return again(`Your account cannot give a token these privileges: ${refused.join(', ')}.`, 'privileges');
    let privileges = 0;
    for (const name of checked) privileges |= allowed.get(name) ?? 0;

    const expires = formExpiry(expiry, clock());
    if ('error' in expires) return again(expires.error, 'expiry');

    // Sudo mode: making a token needs a recent password entry.
    const sudo = await confirmSudo(web, user, form.confirm_password, webAct(web, request, user));
    if (sudo.kind === 'signed-out') return signedOut(request, reply);
    if (sudo.kind === 'password-needed') {
      const status = sudoRefusalStatus(reply, sudo);
      return showTokens(request, reply, user, status, {
        error: sudo.error ?? 'Enter your password to create a token.',
        errorField: 'password',
        description,
        checked,
        expiry,
        needsPassword: true,
      });
    }

    const waitForCreation = await tokenCreation.admit(user.userId);
    if (waitForCreation !== undefined) return tooManyMade(reply, 'Create token', waitForCreation);
    const now = clock();
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
  });

  app.get('/tokens/:id/revoke', { schema: { hide: true, params: tokenIdParams } }, async (request, reply) => {
    const user = await sessionOrSignIn(request, reply);
    if (!user) return reply;
    const now = clock();
    const token = await ownToken(user, request.params.id, now);
    if (!token) return noSuchToken(reply);
    return sendTokensPage(
      reply,
      200,
      'Revoke token',
      revokePage({
        csrf: csrfToken(request, reply),
        token: rowView(token),
        now,
        describe: describePrivilege,
      }),
    );
  });

  app.post(
    '/tokens/:id/revoke',
    { schema: { hide: true, params: tokenIdParams }, preHandler: app.csrfProtection },
    async (request, reply) => {
      const user = await sessionOrSignIn(request, reply);
      if (!user) return reply;
      const id = parseTokenId(request.params.id);
      const deleted =
        id !== undefined &&
        (await deletePublicTokenOfUser(store.db, user.userId, id, webAct(web, request, user), 'page'));
      if (!deleted || id === undefined) return noSuchToken(reply);
      lastUsed.forget(id);
      return reply.redirect('/tokens?revoked=1', 303);
    },
  );

  /** The regeneration's confirmation page (again with an error, after a refused password). */
  const showRegenerate = (
    request: FastifyRequest,
    reply: FastifyReply,
    user: Session,
    token: PageToken,
    status: number,
    error?: string,
  ) => {
    const now = clock();
    return sendTokensPage(
      reply,
      status,
      'Regenerate token',
      regeneratePage({
        csrf: csrfToken(request, reply),
        token: rowView(token),
        now,
        describe: describePrivilege,
        needsPassword: error !== undefined || !inSudoMode(user, now, config.sudoWindowS),
        ...(error === undefined ? {} : { error }),
      }),
    );
  };

  app.get(
    '/tokens/:id/regenerate',
    { schema: { hide: true, params: tokenIdParams } },
    async (request, reply) => {
      const user = await sessionOrSignIn(request, reply);
      if (!user) return reply;
      const token = await ownToken(user, request.params.id, clock());
      if (!token) return noSuchToken(reply);
      return showRegenerate(request, reply, user, token, 200);
    },
  );

  app.post(
    '/tokens/:id/regenerate',
    { schema: { hide: true, params: tokenIdParams, body: sudoForm }, preHandler: app.csrfProtection },
    async (request, reply) => {
      const user = await sessionOrSignIn(request, reply);
      if (!user) return reply;
      const old = await ownToken(user, request.params.id, clock());
      if (!old) return noSuchToken(reply);
      // Sudo mode, as for creating a token: the new secret is a new credential.
      const password = request.body?.confirm_password;
      const sudo = await confirmSudo(web, user, password, webAct(web, request, user));
      if (sudo.kind === 'signed-out') return signedOut(request, reply);
      if (sudo.kind === 'password-needed')
        return showRegenerate(
          request,
          reply,
          user,
          old,
          sudoRefusalStatus(reply, sudo),
          sudo.error ?? 'Enter your password to regenerate the token.',
        );
      const waitForCreation = await tokenCreation.admit(user.userId);
      if (waitForCreation !== undefined) return tooManyMade(reply, 'Regenerate token', waitForCreation);
      const now = clock();
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
          });
          if (done)
            await keepForReveal(trx, revealOwner(request, user), done.token.id, done.token.secret, now);
          return done;
        });
      } catch (err) {
        if (!(err instanceof TokenCapReached)) throw err;
        return sendTokensPage(
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

  /** One of the applications that can act for the user, by client id. */
  async function connectedApplication(user: Session, clientId: string): Promise<ApplicationView | undefined> {
    const apps = await grants.connected(store.db, user.userId, clock(), 1, clientId);
    const found = apps.applications[0];
    return found && applicationView(found, scopePrivileges);
  }

  const noSuchApplication = (reply: FastifyReply) =>
    sendTokensPage(
      reply,
      404,
      'Not found',
      messagePage('No such application', 'No application with that id can act for your account.'),
    );

  app.get(
    '/tokens/applications/:client/revoke',
    { schema: { hide: true, params: clientParams } },
    async (request, reply) => {
      const user = await sessionOrSignIn(request, reply);
      if (!user) return reply;
      const application = await connectedApplication(user, request.params.client);
      if (!application) return noSuchApplication(reply);
      return sendTokensPage(
        reply,
        200,
        'Revoke access',
        revokeApplicationPage({ csrf: csrfToken(request, reply), application, now: clock() }),
      );
    },
  );

  app.post(
    '/tokens/applications/:client/revoke',
    { schema: { hide: true, params: clientParams }, preHandler: app.csrfProtection },
    async (request, reply) => {
      const user = await sessionOrSignIn(request, reply);
      if (!user) return reply;
      const revoked = await grants.revoke(
        store.db,
        user.userId,
        request.params.client,
        webAct(web, request, user),
      );
      if (!revoked) return noSuchApplication(reply);
      return reply.redirect('/tokens?disconnected=1', 303);
    },
  );

  app.get('/tokens/sign-out-everywhere', HIDDEN, async (request, reply) => {
    const user = await sessionOrSignIn(request, reply);
    if (!user) return reply;
    return sendTokensPage(
      reply,
      200,
      'Sign out everywhere',
      signOutEverywherePage({
        csrf: csrfToken(request, reply),
        needsPassword: !inSudoMode(user, clock(), config.sudoWindowS),
      }),
    );
  });

  app.post(
    '/tokens/sign-out-everywhere',
    { schema: { hide: true, body: signOutEverywhereForm }, preHandler: app.csrfProtection },
    async (request, reply) => {
      const user = await sessionOrSignIn(request, reply);
      if (!user) return reply;
      const form = request.body ?? {};
      if (form.confirm !== 'yes')
        return sendTokensPage(
          reply,
          400,
          'Sign out everywhere',
          signOutEverywherePage({
            csrf: csrfToken(request, reply),
            needsPassword: !inSudoMode(user, clock(), config.sudoWindowS),
            error: 'Tick the box to confirm that every token and session should end.',
          }),
        );
      const sudo = await confirmSudo(web, user, form.confirm_password, webAct(web, request, user));
      if (sudo.kind === 'signed-out') return signedOut(request, reply);
      if (sudo.kind === 'password-needed') {
        return sendTokensPage(
          reply,
          sudoRefusalStatus(reply, sudo),
          'Sign out everywhere',
          signOutEverywherePage({
            csrf: csrfToken(request, reply),
            needsPassword: true,
            error: sudo.error ?? 'Enter your password to sign out everywhere.',
          }),
        );
      }
      const ended = await signOutEverywhere(store.db, user.userId, grants.endAll, webAct(web, request, user));
      request.log.info({ userId: user.userId, ...ended }, 'signed out everywhere');
      clearSessionCookie(request, reply);
      return reply.redirect('/login?signed_out=everywhere', 303);
    },
  );
}
