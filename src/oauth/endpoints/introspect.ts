// POST /oauth/introspect (RFC 7662): a confidential client asks whether a token is active. A client
// sees only tokens issued to itself; any other, and every revoked or expired one, is {"active": false}.
// An access token is found through the credential core, as an API request's bearer token is.
import type { FastifyReply, FastifyRequest } from 'fastify';
import { isLive } from '../../auth/live.ts';
import { effectivePrivileges, isBanned } from '../../auth/privileges.ts';
import { findUserById } from '../../users/repository.ts';
import { authenticateClient } from '../client-auth.ts';
import type { OAuthDeps } from '../deps.ts';
import { InvalidClient } from '../errors.ts';
import { formParams, required } from '../params.ts';
import { findRefreshTokenByHash } from '../repository.ts';
import { noStore } from '../respond.ts';
import { scopePrivileges } from '../scopes.ts';
import { sha256Hex } from '../secrets.ts';

const INACTIVE = Object.freeze({ active: false });

/** What an active token's answer says. */
interface TokenFacts {
  user_id: number;
  username: string;
  /** the owner's privileges as stored now */
  user_privileges: number;
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
    return (
      bearer && {
        user_id: bearer.userId,
        username: bearer.username,
        user_privileges: bearer.userPrivileges,
        client_id: bearer.client.id,
        scope: bearer.scope,
        created_at: bearer.createdAt,
        expires_at: bearer.expiresAt,
        token_type: 'Bearer',
      }
    );
  };
  const asRefresh = async (): Promise<TokenFacts | undefined> => {
    const row = await findRefreshTokenByHash(deps.db, sha256Hex(token));
    if (!row || !isLive(row, deps.now())) return undefined;
    const owner = await findUserById(deps.db, row.user_id);
    return (
      owner && {
        ...row,
        username: owner.username,
        user_privileges: Number(owner.privileges),
        token_type: 'refresh_token',
      }
    );
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
    // A banned owner's tokens act for no one: inactive, as if revoked.
    if (!token || token.client_id !== client.id || isBanned(token.user_privileges))
      return noStore(reply).send(INACTIVE);
    return noStore(reply).send({
      active: true,
      scope: token.scope,
      client_id: token.client_id,
      username: token.username,
      token_type: token.token_type,
      exp: Number(token.expires_at),
      iat: Number(token.created_at),
      sub: String(token.user_id),
      privileges: effectivePrivileges(scopePrivileges(token.scope), token.user_privileges),
    });
  };
}
