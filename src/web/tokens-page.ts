// The token page at /tokens (server root, after the web login): list, create and revoke the signed-in
// user's public tokens. Forms are CSRF-protected; everything works without JavaScript.
import { clientAddress } from '../http/client-address.ts';
import type { FastifyInstance, FastifyReply, FastifyRequest } from 'fastify';
import {
  TokenPrivilege,
  isBanned,
  limit,
  tokenPrivilegeNames,
  type TokenPrivilegeName,
} from '../auth/privileges.ts';
import {
  clearSessionCookie,
  confirmSudo,
  csrfToken,
  sessionUser,
  sudoRefusalStatus,
  type Session,
  type WebDeps,
} from './session.ts';
import { inSudoMode } from '../auth/sessions.ts';
import { TokenCapReached, mintToken, type MintedToken } from '../auth/mint.ts';
import { connectedApplications, revokeApplication, signOutEverywhere } from '../auth/revocation.ts';
import {
  deletePublicTokenOfUser,
  findPublicTokenOfUser,
  listPublicTokens,
  type ListedToken,
} from '../tokens/repository.ts';
import { nowSeconds } from '../auth/clock.ts';
import { MAX_EXPIRES_IN_S } from '../tokens/expiry.ts';
import { MAX_DESCRIPTION_LENGTH } from '../tokens/repository.ts';
import { PAGE_SIZE, paginate } from '../tokens/pagination.ts';
import { MAX_ID } from '../store/schema.ts';
import {
  PAGE_SCRIPT,
  SCRIPT_PATH,
  messagePage,
  revokePage,
  signOutEverywherePage,
  sendTokensPage,
  tokensPage,
  type PrivilegeChoice,
  type TokenRowView,
  type TokensPageView,
} from './tokens-page-view.ts';
import { expiryLabel } from './relative-time.ts';

const DAY = 86_400;
/**
 * The expiry choices of the form, named by the rule the list uses ("In 1 month" is listed "in 1 month").
 * Made when a page is rendered, not at start-up: the first date formatter loads ICU's locale data (~5 MB
 * of an idle server's memory, which serving the API never needs).
 */
export const expiryChoices = (): ReadonlyArray<{ value: string; label: string }> => [
  { value: '', label: 'Never' },
  ...[DAY, 7 * DAY, 30 * DAY, 90 * DAY, 365 * DAY].map((s) => ({ value: String(s), label: expiryLabel(s) })),
];

const HIDDEN = { schema: { hide: true } } as const;

/** Privileges the user may put on a token, in table order (Read is never granted). */
function grantable(userPrivileges: number): Array<{ name: TokenPrivilegeName; bit: number }> {
  return (Object.entries(TokenPrivilege) as Array<[TokenPrivilegeName, number]>)
    .filter(([, bit]) => limit(bit, userPrivileges) === bit)
    .map(([name, bit]) => ({ name, bit }));
}

const asList = (v: unknown): unknown[] => (v === undefined ? [] : Array.isArray(v) ? v : [v]);
const formField = (body: unknown, name: string): unknown =>
  typeof body === 'object' && body !== null ? (body as Record<string, unknown>)[name] : undefined;
/** The sudo-mode password of a form, when one was typed. */
const passwordField = (body: unknown): string | undefined => {
  const value = formField(body, 'confirm_password');
  return typeof value === 'string' ? value : undefined;
};

function parseTokenId(raw: string): number | undefined {
  if (!/^\d{1,10}$/.test(raw)) return undefined;
  const id = Number(raw);
  return id >= 1 && id <= MAX_ID ? id : undefined;
}

/** Connected applications listed on the page at most (the first by name); a note says how many there are. */
export const APPLICATIONS_SHOWN = 100;

const SCOPE_NAMES_SHOWN: Readonly<Record<string, string>> = {
  read_confidential: 'read private information and list your tokens',
  write: 'make changes',
  bancho: 'connect to the game server',
};

/** The token page's routes, in the web plugin's context (its forms, CSRF protection and error pages). */
export async function tokensPageRoutes(app: FastifyInstance, web: WebDeps): Promise<void> {
  const { store, lastUsed, metrics, config } = app.tokend;

  const rowView = (t: ListedToken): TokenRowView => {
    const pending = lastUsed.pendingUse(t.id);
    return {
      id: t.id,
      description: t.description,
      privilegeNames: tokenPrivilegeNames(t.privileges),
      lastUsed: pending !== undefined && pending > t.last_updated ? pending : t.last_updated,
      expiresAt: t.expires_at,
    };
  };

  /** A browser whose session ended: back to sign-in, its cookie cleared. */
  function signedOut(request: FastifyRequest, reply: FastifyReply) {
    clearSessionCookie(request, reply);
    return reply.redirect('/login?next=%2Ftokens', 303);
  }

  /** The signed-in, not banned user; otherwise the reply has already been sent. */
  async function requireUser(request: FastifyRequest, reply: FastifyReply): Promise<Session | undefined> {
    const user = await sessionUser(web, request);
    if (!user) {
      const next = request.method === 'GET' ? request.url : '/tokens';
      reply.redirect(`/login?next=${encodeURIComponent(next)}`, 303);
      return undefined;
    }
    if (isBanned(user.userPrivileges)) {
      sendTokensPage(reply, 403, 'Banned', messagePage('Account banned', 'This account is banned.'));
      return undefined;
    }
    return user;
  }

  async function showTokens(
    request: FastifyRequest,
    reply: FastifyReply,
    user: Session,
    status: number,
    extra: Partial<TokensPageView> & { page?: number; checked?: ReadonlySet<string> } = {},
  ) {
    const page = extra.page ?? 1;
    const { limit: size, offset } = paginate(String(page), String(PAGE_SIZE));
    const now = nowSeconds();
    const rows = await listPublicTokens(store.db, user.userId, size + 1, offset, now);
    const apps = await connectedApplications(store.db, user.userId, now, APPLICATIONS_SHOWN);
    const choices: PrivilegeChoice[] = grantable(user.userPrivileges).map(({ name, bit }) => ({
      name,
      bit,
      checked: extra.checked?.has(name) ?? false,
    }));
    const view: TokensPageView = {
      ...extra,
      username: user.username,
      csrf: csrfToken(request, reply),
      tokens: rows.slice(0, size).map(rowView),
      now,
      choices,
      expiryChoices: expiryChoices(),
      page,
      hasNext: rows.length > size,
      needsPassword: !inSudoMode(user, now, config.sudoWindowS),
      applicationsTotal: apps.total,
      applications: apps.applications.map((a) => ({
        clientId: a.clientId,
        name: a.name,
        avatar: a.avatar,
        abilities:
          a.scope === ''
            ? ['granted by an operator']
            : a.scope.split(' ').map((n) => SCOPE_NAMES_SHOWN[n] ?? n),
        approvedAt: a.approvedAt,
        lastUsedAt: a.lastUsedAt,
      })),
    };
    return sendTokensPage(reply, status, 'API tokens', tokensPage(view));
  }

  app.get(SCRIPT_PATH, HIDDEN, async (_request, reply) =>
    reply
      .header('Content-Type', 'application/javascript; charset=utf-8')
      .header('Cache-Control', 'no-cache')
      .send(PAGE_SCRIPT),
  );

  app.get(
    '/tokens',
    HIDDEN,
    async (
      request: FastifyRequest<{ Querystring: { p?: unknown; revoked?: unknown; disconnected?: unknown } }>,
      reply,
    ) => {
      const user = await requireUser(request, reply);
      if (!user) return reply;
      const { page } = paginate(request.query.p, undefined);
      const notice =
        request.query.revoked !== undefined
          ? 'The token was revoked.'
          : request.query.disconnected !== undefined
            ? 'The application was disconnected: its access to your account has ended.'
            : undefined;
      return showTokens(request, reply, user, 200, { page, notice });
    },
  );

  app.post('/tokens', { ...HIDDEN, preHandler: app.csrfProtection }, async (request, reply) => {
    const user = await requireUser(request, reply);
    if (!user) return reply;
    const rawDescription = formField(request.body, 'description');
    const description = typeof rawDescription === 'string' ? rawDescription.trim() : '';
    const names = asList(formField(request.body, 'privileges'));
    const checked = new Set(names.filter((n): n is string => typeof n === 'string'));
    const again = (error: string) => showTokens(request, reply, user, 400, { error, description, checked });

    if (description.length > MAX_DESCRIPTION_LENGTH)
      return again(`The description is too long (at most ${MAX_DESCRIPTION_LENGTH} characters).`);
    // eslint-disable-next-line no-control-regex
    if (/[\u0000-\u0008\u000b\u000c\u000e-\u001f\u007f]/.test(description))
      return again('The description may not contain control characters.');
    const allowed = new Map(grantable(user.userPrivileges).map((p) => [p.name as string, p.bit]));
    const refused = names.filter((n) => typeof n !== 'string' || !allowed.has(n));
    if (refused.length > 0)
      return again(`Your account cannot give a token these privileges: ${refused.map(String).join(', ')}.`);
    let privileges = 0;
    for (const name of checked) privileges |= allowed.get(name) ?? 0;

    const rawExpiry = formField(request.body, 'expires_in');
    let expiresIn: number | undefined;
    if (rawExpiry !== undefined && rawExpiry !== '') {
      if (typeof rawExpiry !== 'string' || !/^\d{1,10}$/.test(rawExpiry))
        return again('Choose when the token expires.');
      expiresIn = Number(rawExpiry);
      if (expiresIn < 1 || expiresIn > MAX_EXPIRES_IN_S) return again('Choose when the token expires.');
    }

    // Sudo mode: making a token needs a recent password entry.
    const sudo = await confirmSudo(web, user, passwordField(request.body), clientAddress(request));
    if (sudo.kind === 'signed-out') return signedOut(request, reply);
    if (sudo.kind === 'password-needed') {
      const status = sudoRefusalStatus(reply, sudo);
      return showTokens(request, reply, user, status, {
        error: sudo.error ?? 'Enter your password to create a token.',
        description,
        checked,
        needsPassword: true,
      });
    }

    const now = nowSeconds();
    let token: MintedToken;
    try {
      token = await mintToken(store.db, {
        userId: user.userId,
        requested: privileges,
        description,
        private: false,
        now,
        expiresAt: expiresIn === undefined ? undefined : now + expiresIn,
        cap: config.tokensPerUserMax,
      });
    } catch (err) {
      if (!(err instanceof TokenCapReached)) throw err;
      return showTokens(request, reply, user, 409, {
        error: `You already have the most tokens allowed (${err.max}). Revoke some before creating another.`,
        description,
        checked,
      });
    }
    metrics.tokensCreated.inc({ via: 'web' });
    return showTokens(request, reply, user, 200, {
      created: { secret: token.secret, description, privilegeNames: tokenPrivilegeNames(token.privileges) },
    });
  });

  app.get(
    '/tokens/:id/revoke',
    HIDDEN,
    async (request: FastifyRequest<{ Params: { id: string } }>, reply) => {
      const user = await requireUser(request, reply);
      if (!user) return reply;
      const id = parseTokenId(request.params.id);
      const now = nowSeconds();
      const token =
        id === undefined ? undefined : await findPublicTokenOfUser(store.db, user.userId, id, now);
      if (!token)
        return sendTokensPage(
          reply,
          404,
          'Not found',
          messagePage('No such token', 'You have no token with that id.'),
        );
      return sendTokensPage(
        reply,
        200,
        'Revoke token',
        revokePage({ csrf: csrfToken(request, reply), token: rowView(token), now }),
      );
    },
  );

  app.post(
    '/tokens/:id/revoke',
    { ...HIDDEN, preHandler: app.csrfProtection },
    async (request: FastifyRequest<{ Params: { id: string } }>, reply) => {
      const user = await requireUser(request, reply);
      if (!user) return reply;
      const id = parseTokenId(request.params.id);
      const deleted = id !== undefined && (await deletePublicTokenOfUser(store.db, user.userId, id));
      if (!deleted || id === undefined)
        return sendTokensPage(
          reply,
          404,
          'Not found',
          messagePage('No such token', 'You have no token with that id.'),
        );
      lastUsed.forget(id);
      return reply.redirect('/tokens?revoked=1', 303);
    },
  );

  app.post(
    '/tokens/applications/:client/revoke',
    { ...HIDDEN, preHandler: app.csrfProtection },
    async (request: FastifyRequest<{ Params: { client: string } }>, reply) => {
      const user = await requireUser(request, reply);
      if (!user) return reply;
      const revoked = await revokeApplication(store.db, user.userId, request.params.client);
      if (!revoked)
        return sendTokensPage(
          reply,
          404,
          'Not found',
          messagePage('No such application', 'No application with that id can act for your account.'),
        );
      return reply.redirect('/tokens?disconnected=1', 303);
    },
  );

  app.get('/tokens/sign-out-everywhere', HIDDEN, async (request, reply) => {
    const user = await requireUser(request, reply);
    if (!user) return reply;
    return sendTokensPage(
      reply,
      200,
      'Sign out everywhere',
      signOutEverywherePage({
        csrf: csrfToken(request, reply),
        needsPassword: !inSudoMode(user, nowSeconds(), config.sudoWindowS),
      }),
    );
  });

  app.post(
    '/tokens/sign-out-everywhere',
    { ...HIDDEN, preHandler: app.csrfProtection },
    async (request, reply) => {
      const user = await requireUser(request, reply);
      if (!user) return reply;
      if (formField(request.body, 'confirm') !== 'yes')
        return sendTokensPage(
          reply,
          400,
          'Sign out everywhere',
          signOutEverywherePage({
            csrf: csrfToken(request, reply),
            needsPassword: !inSudoMode(user, nowSeconds(), config.sudoWindowS),
            error: 'Tick the box to confirm that every token and session should end.',
          }),
        );
      const sudo = await confirmSudo(web, user, passwordField(request.body), clientAddress(request));
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
      const ended = await signOutEverywhere(store.db, user.userId);
      request.log.info({ userId: user.userId, ...ended }, 'signed out everywhere');
      clearSessionCookie(request, reply);
      return reply.redirect('/login?signed_out=everywhere', 303);
    },
  );
}
