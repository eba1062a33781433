// POST /oauth/introspect (RFC 7662): a confidential client asks whether a token is active. A client
// sees only tokens issued to itself; any other, and every revoked or expired one, is {"active": false}.
import type { FastifyReply, FastifyRequest } from 'fastify';
import { effectivePrivileges, isBanned } from '../../auth/privileges.ts';
import { findUserById } from '../../users/repository.ts';
import { authenticateClient } from '../client-auth.ts';
import type { OAuthDeps } from '../deps.ts';
import { InvalidClient } from '../errors.ts';
import { formParams, required } from '../params.ts';
import { findAccessTokenByHash, findRefreshTokenByHash } from '../repository.ts';
import { noStore } from '../respond.ts';
import { scopePrivileges } from '../scopes.ts';
import { sha256Hex } from '../secrets.ts';

const INACTIVE = Object.freeze({ active: false });

interface TokenFacts {
  user_id: number;
  client_id: string;
  scope: string;
  created_at: number;
  expires_at: number;
  token_type: string;
}

async function findLiveToken(
  deps: OAuthDeps,
  tokenHash: string,
  hint: string | undefined,
): Promise<TokenFacts | undefined> {
  const now = deps.now();
  const asAccess = async () => {
    const row = await findAccessTokenByHash(deps.db, tokenHash);
    return row && Number(row.expires_at) > now ? { ...row, token_type: 'Bearer' } : undefined;
  };
  const asRefresh = async () => {
    const row = await findRefreshTokenByHash(deps.db, tokenHash);
    return row && row.used === 0 && Number(row.expires_at) > now
      ? { ...row, token_type: 'refresh_token' }
      : undefined;
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
    const token = await findLiveToken(deps, sha256Hex(required(params, 'token')), params.token_type_hint);
    if (!token || token.client_id !== client.id) return noStore(reply).send(INACTIVE);
    const owner = await findUserById(deps.db, token.user_id);
    // A banned owner's tokens act for no one: inactive, as if revoked.
    if (!owner || isBanned(owner.privileges)) return noStore(reply).send(INACTIVE);
    return noStore(reply).send({
      active: true,
      scope: token.scope,
      client_id: token.client_id,
      username: owner.username,
      token_type: token.token_type,
      exp: Number(token.expires_at),
      iat: Number(token.created_at),
      sub: String(token.user_id),
      privileges: effectivePrivileges(scopePrivileges(token.scope), owner.privileges),
    });
  };
}
