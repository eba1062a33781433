// The token operations of the v1 API, at their paths under {base_url}/v1. Their schemas are in schemas.ts;
// the handlers' requests are typed from them.
import type {
  ContextConfigDefault,
  FastifyInstance,
  FastifyReply,
  FastifyRequest,
  FastifySchema,
  RawReplyDefaultExpression,
  RawRequestDefaultExpression,
  RawServerDefault,
  RouteGenericInterface,
  RouteHandlerMethod,
} from 'fastify';
import type { JsonSchemaToTsProvider } from '@fastify/type-provider-json-schema-to-ts';
import { sendEnvelope } from '../http/envelope.ts';
import { refuseAccessToken } from '../http/bearer-challenge.ts';
import { ANY_IDENTITY, identityOf, type CredentialRule } from '../http/plugin.ts';
import { NO_IDENTITY, type AccessTokenIdentity, type Identity } from '../auth/identity.ts';
import { scopeGrants } from '../auth/scope.ts';
import { TokenPrivilege, missingTokenPrivileges } from '../auth/privileges.ts';
import { listPublicTokens, deletePublicTokenOfUser, type ListedToken } from './repository.ts';
import { loginForToken } from './service.ts';
import { paginate } from './pagination.ts';
import { descriptionProblem } from './description.ts';
import { presentTime } from './time-format.ts';
import { MAX_ID } from '../store/schema.ts';
import { decimalInteger } from '../decimal-integer.ts';
import { firstValue } from '../http/first-value.ts';
import { clientGone, requestAct } from '../http/client-address.ts';
import {
  createSchema,
  deleteByIdSchema,
  TOKEN_ID_SEGMENT,
  deleteSelfSchema,
  fixPrivilegesSchema,
  listSchema,
  selfSchema,
} from './schemas.ts';

/** A handler registered on several routes with the same schema, its request typed from that schema. */
type Handler<Schema extends FastifySchema> = RouteHandlerMethod<
  RawServerDefault,
  RawRequestDefaultExpression,
  RawReplyDefaultExpression,
  RouteGenericInterface,
  ContextConfigDefault,
  Schema,
  JsonSchemaToTsProvider
>;

/** The OAuth scope a bearer token needs to list the user's API tokens. */
export const LIST_TOKENS_SCOPE = 'read_confidential';

export const FIX_PRIVILEGES_NEEDS = TokenPrivilege.ManageUser | TokenPrivilege.APIMeta;
/**
 * Revoking a token by id needs Write among the API token's effective privileges: a privileges-0 token, a
 * web session (no privileges) and a banned owner's token cannot; a bearer token never can. Deleting the
 * token in use (/tokens/self) needs none.
 */
export const REVOKE_BY_ID_NEEDS = TokenPrivilege.Write;

/**
 * 401 unless the request's effective privileges include every bit of `needed` (for an access token, with
 * RFC 6750's insufficient_scope: no scope carries these privileges).
 */
export function lacksPrivileges(
  identity: Identity,
  needed: number,
  reply: FastifyReply,
): FastifyReply | undefined {
  const held = identity.kind === 'none' ? 0 : identity.privileges;
  const missing = missingTokenPrivileges(held, needed);
  if (missing.length === 0) return undefined;
  return refuseAccessToken(
    reply,
    identity,
    `You don't have the privileges to do this; missing: ${missing.join(', ')}.`,
  );
}

/** Listing tokens: an API token, or a user's access token (with the scope, checked by the route). */
const LIST_TAKES = {
  takes: ['token', 'bearer'],
  clientCannot: 'list tokens',
} as const satisfies CredentialRule;

/** Revoking a token by id: an API token only (an access token may only delete itself). */
const REVOKE_BY_ID_TAKES = {
  takes: ['token'],
  clientCannot: 'revoke tokens',
  bearerRefusal:
    'A bearer token cannot revoke other tokens: it may only delete itself (/tokens/self). Use an API token.',
} as const satisfies CredentialRule;

/** fix_privileges: no credential, an API token or a user's access token, each judged by its privileges. */
const FIX_PRIVILEGES_TAKES = {
  takes: ['none', 'token', 'bearer'],
  clientCannot: 'fix privileges',
} as const satisfies CredentialRule;

/** /tokens/self: whatever is presented, none included (each has its answer). */
const SELF_TAKES = { takes: ANY_IDENTITY } as const satisfies CredentialRule;

/** What /tokens/self answers of any access token: the spec's fields, then its client's id and its expiry. */
const accessTokenFacts = (identity: AccessTokenIdentity) => ({
  client: identity.client,
  scope: identity.scope,
  privileges: identity.privileges,
  created: identity.created,
  client_id: identity.client.id,
  expires_at: identity.expiresAt,
});

export async function tokenRoutes(instance: FastifyInstance): Promise<void> {
  const app = instance.withTypeProvider<JsonSchemaToTsProvider>();
  const { store, passwords, loginLimiter, lastUsed, credentials, jobs, clock, events, failedSignIns } =
    app.tokend;
  const timeFormat = app.tokend.config.rippleTimeFormat;
  /**
   * The security log's act of an API request, by the API token it carries and its owner (none: a password
   * login, whose user is the event's own).
   */
  const apiAct = (request: FastifyRequest, identity: Identity) =>
    identity.kind === 'token'
      ? requestAct(request, 'api', identity.tokenId, clock(), events, identity.userId)
      : requestAct(request, 'api', null, clock(), events);

  const create: Handler<typeof createSchema> = async (request, reply) => {
    const body = request.body;
    // The schema already refuses a body that is not an object (400); this guards the handler on its own.
    if (body === undefined || body === null || typeof body !== 'object' || Array.isArray(body))
      return sendEnvelope(reply, 400, 'The body must be a JSON object.');
    const descriptionRefused = descriptionProblem(body.description ?? '', store.layout);
    if (descriptionRefused !== undefined)
      return sendEnvelope(reply, 400, `Invalid body: the description ${descriptionRefused}.`);
    const username = body.username ?? undefined;
    const id = body.id ?? undefined;
    const password = body.password ?? '';
    const missing: string[] = [];
    if ((username === undefined || username === '') && (id === undefined || id === 0))
      missing.push('username|id');
    if (password === '') missing.push('password');
    if (missing.length > 0) return sendEnvelope(reply, 422, `Missing parameters: ${missing.join(', ')}.`);

    const result = await loginForToken(
      {
        db: store.db,
        layout: store.layout,
        passwords,
        loginLimiter,
        tokensPerUserMax: app.tokend.config.tokensPerUserMax,
        clock,
        failedSignIns,
        tokenCreation: app.tokend.tokenCreation,
      },
      {
        username,
        id,
        password,
        privileges: body.privileges ?? 0,
        description: body.description ?? '',
        expiresIn: body.expires_in ?? undefined,
      },
      apiAct(request, NO_IDENTITY),
      clientGone(request),
    );
    app.tokend.metrics.loginAttempt(result.kind);
    switch (result.kind) {
      case 'no-user':
        return sendEnvelope(reply, 404, 'No user with that username/id was found.');
      case 'rate-limited':
        reply.header('Retry-After', String(result.retryAfterS));
        return sendEnvelope(reply, 429, "You've made too many login attempts. Try again later.");
      case 'legacy-password':
        return sendEnvelope(
          reply,
          418,
          'This user still has a legacy password: they must first log in through the website.',
        );
      case 'wrong-password':
        return sendEnvelope(reply, 403, "That password doesn't match!");
      case 'banned':
        // privileges 0, as the Ripple family's API answers: a banned user's token would carry none.
        return sendEnvelope(reply, 402, 'That user is banned.', {
          banned: true,
          id: result.user.id,
          username: result.user.username,
          privileges: 0,
        });
      case 'busy':
        reply.header('Retry-After', String(result.retryAfterS));
        return sendEnvelope(
          reply,
          503,
          'The server is busy checking other passwords. Try again in a moment.',
        );
      case 'too-many-created':
        reply.header('Retry-After', String(result.retryAfterS));
        return sendEnvelope(
          reply,
          429,
          `This user has made too many tokens recently (TOKEN_CREATE_RATE_LIMIT): try again in ${result.retryAfterS} seconds. No token was created.`,
        );
      case 'too-many-tokens':
        return sendEnvelope(
          reply,
          409,
          `This user already holds ${result.max} live API tokens, the most allowed (TOKENS_PER_USER_MAX): ` +
            'delete some before creating another. No token was created.',
        );
      case 'created':
        return sendEnvelope(reply, 200, 'ok', {
          username: result.user.username,
          id: result.user.id,
          privileges: result.privileges,
          token: result.token.secret,
          banned: false,
          ...(result.expiresAt === undefined ? {} : { expires_at: result.expiresAt }),
        });
    }
  };
  for (const url of ['/tokens', '/tokens/new', '/token/new']) app.post(url, { schema: createSchema }, create);

  app.get('/tokens', { schema: listSchema, config: { identify: LIST_TAKES } }, async (request, reply) => {
    const identity = identityOf(request, LIST_TAKES.takes);
    if (identity.kind === 'bearer' && !scopeGrants(identity.scope, LIST_TOKENS_SCOPE))
      return refuseAccessToken(
        reply,
        identity,
        `This bearer token lacks the scope ${LIST_TOKENS_SCOPE}, which listing your tokens needs.`,
        { scope: LIST_TOKENS_SCOPE },
      );
    // An application acts for its user only with privileges the user holds now: the scope's privilege,
    // limited by the owner (0 once banned, when introspection also calls the token inactive).
    if (identity.kind === 'bearer' && (identity.privileges & TokenPrivilege.ReadConfidential) === 0)
      return refuseAccessToken(
        reply,
        identity,
        'This bearer token carries no privileges while its owner is banned: it cannot list tokens.',
        { ownerBanned: true },
      );
    // ?id=N lists only that token (as the Ripple family's API does); an empty id is no id.
    const rawId = firstValue(request.query.id);
    const idText = rawId?.trim() ?? '';
    const id = idText === '' ? undefined : decimalInteger(idText, 'plus');
    if (idText !== '' && id === undefined)
      return sendEnvelope(
        reply,
        400,
        `Invalid query parameter id=${JSON.stringify(rawId)}: give the id of one of your tokens ` +
          '(a non-negative integer), or leave it out to list them all.',
      );
    const { limit, offset } = paginate(request.query.p, request.query.l);
    const now = clock();
    // With an id: a page of that token or none; an id beyond any stored one is no token.
    const rows: ListedToken[] =
      id !== undefined && id > MAX_ID
        ? []
        : await listPublicTokens(store.db, identity.userId, limit, offset, now, id);
    const tokens = rows.map((t) => {
      const pending = lastUsed.pendingUse(t.id);
      const used = pending !== undefined && pending > t.last_updated ? pending : t.last_updated;
      return { ...t, last_updated: presentTime(used, timeFormat) };
    });
    return sendEnvelope(reply, 200, 'ok', { tokens });
  });

  app.get(
    '/tokens/self',
    { schema: selfSchema, config: { identify: SELF_TAKES } },
    async (request, reply) => {
      const identity = identityOf(request, SELF_TAKES.takes);
      switch (identity.kind) {
        case 'none':
          return sendEnvelope(reply, 404, 'No token is being used in this request.');
        // The spec's fields, then who signed in: user_id and username (no scope needed: the consent page
        // promises every application the user's id and username), client_id for an access token.
        case 'token':
          return sendEnvelope(reply, 200, 'ok', {
            id: identity.tokenId,
            privileges: identity.privileges,
            description: identity.description,
            last_updated: presentTime(identity.lastUpdated, timeFormat),
            user_id: identity.userId,
            username: identity.username,
          });
        case 'bearer':
          return sendEnvelope(reply, 200, 'ok', {
            ...accessTokenFacts(identity),
            user_id: identity.userId,
            username: identity.username,
          });
        // An application's own token: no user_id or username, as it acts for no user.
        case 'client':
          return sendEnvelope(reply, 200, 'ok', accessTokenFacts(identity));
      }
    },
  );

  const deleteSelf: Handler<typeof deleteSelfSchema> = async (request, reply) => {
    const identity = identityOf(request, SELF_TAKES.takes);
    switch (identity.kind) {
      case 'none':
        return sendEnvelope(reply, 400, 'No token was given, so none was deleted.');
      case 'token':
        await credentials.end(identity, apiAct(request, identity));
        break;
      case 'bearer':
      case 'client':
        await credentials.end(identity, requestAct(request, 'oauth', identity.client.id, clock(), events));
        break;
    }
    return sendEnvelope(reply, 200, 'Bye! The token has been deleted.');
  };
  const self = { schema: deleteSelfSchema, config: { identify: SELF_TAKES } };
  app.post('/tokens/self/delete', self, deleteSelf);
  app.delete('/tokens/self', self, deleteSelf);

  // Static segments win over parameters in the router, so /tokens/self and /tokens/self/delete stay as above.
  // The id is digits by its route (TOKEN_ID_SEGMENT); one beyond any stored id is no token of the caller's.
  const deleteById: Handler<typeof deleteByIdSchema> = async (request, reply) => {
    const identity = identityOf(request, REVOKE_BY_ID_TAKES.takes);
    const refused = lacksPrivileges(identity, REVOKE_BY_ID_NEEDS, reply);
    if (refused) return refused;
    const tokenId = Number(request.params.id);
    // The same answer whether the id is someone else's or does not exist.
    const deleted =
      tokenId >= 1 &&
      tokenId <= MAX_ID &&
      (await deletePublicTokenOfUser(store.db, identity.userId, tokenId, apiAct(request, identity), 'by-id'));
    if (!deleted) return sendEnvelope(reply, 404, 'You have no token with that id.');
    lastUsed.forget(tokenId);
    return sendEnvelope(reply, 200, 'The token has been deleted.');
  };
  // Only digits are a token id: any other segment after /tokens/ is no path at all (the 404 with
  // X-Real-404, as in the Ripple family), and names no method in an Allow header (/tokens/new,
  // /tokens/fix_privileges).
  const byId = { schema: deleteByIdSchema, config: { identify: REVOKE_BY_ID_TAKES } };
  app.post(`/tokens/:id(${TOKEN_ID_SEGMENT})/delete`, byId, deleteById);
  app.delete(`/tokens/:id(${TOKEN_ID_SEGMENT})`, byId, deleteById);

  app.post(
    '/tokens/fix_privileges',
    { schema: fixPrivilegesSchema, config: { identify: FIX_PRIVILEGES_TAKES } },
    async (request, reply) => {
      const identity = identityOf(request, FIX_PRIVILEGES_TAKES.takes);
      const refused = lacksPrivileges(identity, FIX_PRIVILEGES_NEEDS, reply);
      if (refused || identity.kind === 'none') return refused;
      const raw = firstValue(request.query.id);
      const value = raw?.trim() ?? '';
      // 0 (however written) or nothing: every user.
      const userId = value === 'self' ? identity.userId : value === '' ? 0 : decimalInteger(value, 'plus');
      if (userId === undefined)
        return sendEnvelope(
          reply,
          400,
          `Invalid query parameter id=${JSON.stringify(raw)}: give a user id, "self", or 0/nothing for all users.`,
        );
      jobs.startFixPrivileges(
        store.db,
        userId === 0 ? { kind: 'all' } : { kind: 'user', userId },
        apiAct(request, identity),
      );
      return sendEnvelope(reply, 200, 'Privilege fixing started.');
    },
  );
}
