// GET /tokens: the signed-in user's public tokens a page at a time, the token just made (its secret shown
// once), the creation form, and the applications that can act for the user.
import type { FastifyInstance, FastifyReply, FastifyRequest } from 'fastify';
import type { JsonSchemaToTsProvider } from '@fastify/type-provider-json-schema-to-ts';
import {
  TOKEN_PRIVILEGE_DESCRIPTIONS,
  TokenPrivilege,
  limit,
  tokenPrivilegeNames,
  type TokenPrivilegeName,
} from '../../auth/privileges.ts';
import { inSudoMode } from '../../auth/sessions.ts';
import { serverOrigin } from '../../http/origin.ts';
import { firstValue } from '../../http/first-value.ts';
import { connectedApplications, type ConnectedApplication } from '../../oauth/applications.ts';
import { scopePrivileges } from '../../oauth/scopes.ts';
import { sendAccountPage } from '../../web/account-pages.ts';
import { tokensPageQuery } from './forms.ts';
import { requireSession, signedInUser } from '../../web/hooks.ts';
import { takeReveal } from '../../web/reveal.ts';
import { csrfToken, type Session } from '../../web/session.ts';
import { findPageToken, listPageTokens, type PageOrder } from '../repository.ts';
import { TOKENS_PER_PAGE, paginate } from '../pagination.ts';
import { TOKENS_SESSION, parseTokenId, revealOwner, rowView } from './context.ts';
import { customDateRange, expiryChoices } from './expiry.ts';
import { tokensPage, type ApplicationView, type CreatedToken, type TokensPageView } from './list-view.ts';
import type { PrivilegeChoice } from './create-form-view.ts';

/** Connected applications listed on the page at most (the first by name); a note says how many there are. */
export const APPLICATIONS_SHOWN = 100;

/** Privileges the user may put on a token, in table order (Read is never granted). */
export function grantable(userPrivileges: number): Array<{ name: TokenPrivilegeName; bit: number }> {
  return (Object.entries(TokenPrivilege) as Array<[TokenPrivilegeName, number]>)
    .filter(([, bit]) => limit(bit, userPrivileges) === bit)
    .map(([name, bit]) => ({ name, bit }));
}

/**
 * The privileges a token form's checkboxes ask for: their bits, when every name is one the user may give
 * (the form offers only those); else the message naming the others (a forged form).
 */
export function formPrivileges(
  userPrivileges: number,
  names: readonly string[],
): { privileges: number } | { refused: string } {
  const allowed = new Map(grantable(userPrivileges).map((p) => [p.name as string, p.bit]));
  const refused = names.filter((n) => !allowed.has(n));
  if (refused.length > 0)
    return { refused: `Your account cannot give a token these privileges: ${refused.join(', ')}.` };
  let privileges = 0;
  for (const name of names) privileges |= allowed.get(name) ?? 0;
  return { privileges };
}

/** The order the list is in, from `?sort=`: by creation unless last use is asked for. */
const orderOf = (raw: unknown): PageOrder => (raw === 'last-used' ? 'last-used' : 'created');

/** A connected application as the page shows it: what it may do in a few words, from its scope's privileges. */
export function applicationView(a: ConnectedApplication): ApplicationView {
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

/** What the page shows besides the list: a notice, an error and the form's values sent, the new secret. */
export type PageExtras = Partial<TokensPageView> & { page?: number; checked?: ReadonlySet<string> };

/** Sends the token page (again with the form's values and an error, after a refused creation). */
export type ShowTokens = (
  request: FastifyRequest,
  reply: FastifyReply,
  user: Session,
  status: number,
  extra?: PageExtras,
) => Promise<FastifyReply>;

/** The token page, at the request's time, from what the app holds; `apiReference` is linked from it. */
export function tokensPageShower(app: FastifyInstance, apiReference: string): ShowTokens {
  const { store, lastUsed, config } = app.tokend;
  return async (request, reply, user, status, extra = {}) => {
    const page = extra.page ?? 1;
    const order = extra.order ?? 'created';
    const { limit: size, offset } = paginate(String(page), String(TOKENS_PER_PAGE));
    const now = request.now;
    const rows = await listPageTokens(store.db, user.userId, { order, limit: size + 1, offset, now });
    const apps = await connectedApplications(store.db, user.userId, now, APPLICATIONS_SHOWN);
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
      tokens: rows.slice(0, size).map((t) => rowView(lastUsed, t)),
      now,
      order,
      choices,
      expiryChoices: expiryChoices(),
      dateRange: customDateRange(now),
      page,
      hasNext: rows.length > size,
      needsPassword: !inSudoMode(user, now, config.sudoWindowS),
      applicationsTotal: apps.total,
      applications: apps.applications.map(applicationView),
      usage: {
        exampleUrl: `${serverOrigin(request, config.publicUrl)}${config.basePath}/v1/tokens/self`,
        docsPath: apiReference,
      },
    };
    return sendAccountPage(reply, status, 'API tokens', tokensPage(view));
  };
}

export async function listRoute(untyped: FastifyInstance, showTokens: ShowTokens): Promise<void> {
  const app = untyped.withTypeProvider<JsonSchemaToTsProvider>();
  const { store, lastUsed } = app.tokend;
  app.get(
    '/tokens',
    { schema: { hide: true, querystring: tokensPageQuery }, preHandler: requireSession(TOKENS_SESSION) },
    async (request, reply) => {
      const user = signedInUser(request);
      const { page } = paginate(request.query.p, undefined);
      const order = orderOf(firstValue(request.query.sort));
      // After a creation or regeneration (303 here): the new secret, if this session has not seen it yet.
      let created: CreatedToken | undefined;
      let notice =
        request.query.revoked !== undefined
          ? 'The token was revoked.'
          : request.query.edited !== undefined
            ? 'The token was changed. It keeps its secret: anything using it goes on with what it may now do.'
            : request.query.disconnected !== undefined
              ? 'The application was disconnected: its access to your account has ended.'
              : undefined;
      const createdText = firstValue(request.query.created);
      const createdId = createdText === undefined ? undefined : parseTokenId(createdText);
      if (createdId !== undefined) {
        const now = request.now;
        const secret = await takeReveal(store.db, revealOwner(request, user), createdId, now);
        const token =
          secret === undefined ? undefined : await findPageToken(store.db, user.userId, createdId, now);
        if (secret !== undefined && token) {
          const { privilegeNames, expiresAt } = rowView(lastUsed, token);
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
    },
  );
}
