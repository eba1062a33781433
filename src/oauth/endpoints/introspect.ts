// POST /oauth/introspect (RFC 7662): a confidential client asks whether a token is active. A client
// sees only tokens issued to itself; any other, and every revoked or expired one, is {"active": false}.
// A client credentials token (no user) is active without sub or username; a banned owner's is inactive.
// An access token acts for its user by the rule of every token used (ownerHoldsNothing: inactive for a
// user without UserNormal; a restricted user's is active, with what limit() leaves); a refresh token is
// active only while it could be exchanged, which a banned or restricted user's cannot (isBanned).
// An access token is found through the credential core, as an API request's bearer token is.
import type { FastifyReply, FastifyRequest } from 'fastify';
import { isLive } from '../../auth/live.ts';
import { effectivePrivileges, isBanned, ownerHoldsNothing } from '../../auth/privileges.ts';
import { findUserById } from '../../users/repository.ts';
import { authenticateClient } from '../client-auth.ts';
import type { OAuthDeps } from '../deps.ts';
import { InvalidClient } from '../errors.ts';
import { formParams, required } from '../params.ts';
import { findRefreshTokenByHash, ownerIsBanned } from '../repository.ts';
import { noStore } from '../respond.ts';
import { scopePrivileges } from '../scopes.ts';
import { sha256Hex } from '../secrets.ts';

const INACTIVE = Object.freeze({ active: false });

/** The user a token acts for, as stored now. */
interface TokenUser {
  id: number;
  username: string;
  privileges: number;
}

/** What an active token's answer says. */
interface TokenFacts {
  /** undefined: an application's own token (client credentials), which acts for no user */
  user: TokenUser | undefined;
  /** whose ban makes the token inactive: its user's, or for an application's own token its owner's */
  banned: boolean;
  client_id: string;
  scope: string;
  created_at: number;
  expires_at: number;
  token_type: string;
}

async function findLiveToken(
  deps: OAuthDeps,
  token: string,
  hint: string | undefined,
): Promise<TokenFacts | undefined> {
  const asAccess = async (): Promise<TokenFacts | undefined> => {
    const bearer = await deps.credentials.bearer(token);
    if (!bearer) return undefined;
    const common = {
      client_id: bearer.client.id,
      scope: bearer.scope,
      created_at: bearer.createdAt,
      expires_at: bearer.expiresAt,
      token_type: 'Bearer',
    };
    if (bearer.kind === 'client') return { ...common, user: undefined, banned: bearer.ownerBanned };
    const user = { id: bearer.userId, username: bearer.username, privileges: bearer.userPrivileges };
    return { ...common, user, banned: ownerHoldsNothing(user.privileges) };
  };
  const asRefresh = async (): Promise<TokenFacts | undefined> => {
    const row = await findRefreshTokenByHash(deps.db, sha256Hex(token));
    if (!row || !isLive(row, deps.now())) return undefined;
    const owner = await findUserById(deps.db, row.user_id);
    if (!owner) return undefined;
    const user = { id: owner.id, username: owner.username, privileges: owner.privileges };
    return {
      user,
      banned: isBanned(user.privileges),
      client_id: row.client_id,
      scope: row.scope,
      created_at: row.created_at,
      expires_at: row.expires_at,
      token_type: 'refresh_token',
    };
  };
  const order = hint === 'refresh_token' ? [asRefresh, asAccess] : [asAccess, asRefresh];
  for (const find of order) {
    const found = await find();
    if (found) return found;
  }
  return undefined;
}

export function introspectEndpoint(deps: OAuthDeps) {
  return async function introspect(request: FastifyRequest, reply: FastifyReply) {
    const params = formParams(request);
    const { method, client } = await authenticateClient(deps.db, request, params);
    if (method === 'none')
      throw new InvalidClient('Introspection needs client authentication; public clients cannot use it.');
    const token = await findLiveToken(deps, required(params, 'token'), params.token_type_hint);
    // A banned user's tokens, and every token of a banned owner's application, act for no one: inactive,
    // as if revoked.
    if (
      !token ||
      token.client_id !== client.id ||
      token.banned ||
      (await ownerIsBanned(deps.db, client.ownerId))
    )
      return noStore(reply).send(INACTIVE);
    const facts = {
      active: true,
      scope: token.scope,
      client_id: token.client_id,
      token_type: token.token_type,
      exp: token.expires_at,
      iat: token.created_at,
    };
    // An application's own token claims no user: no sub, no username, no privileges.
    if (!token.user) return noStore(reply).send({ ...facts, privileges: 0 });
    return noStore(reply).send({
      ...facts,
      username: token.user.username,
      sub: String(token.user.id),
      privileges: effectivePrivileges(scopePrivileges(token.scope), token.user.privileges),
    });
  };
}
