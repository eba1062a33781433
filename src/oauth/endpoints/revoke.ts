// POST /oauth/revoke (RFC 7009): a client revokes one of its own tokens. An unknown token is not an
// error (§2.2). Revoking a refresh token also revokes the access tokens of the same grant. An access token
// is found through the credential core, as an API request's bearer token is.
import type { FastifyReply, FastifyRequest } from 'fastify';
import { authenticateClient } from '../client-auth.ts';
import type { OAuthClient } from '../clients.ts';
import type { OAuthDeps } from '../deps.ts';
import { InvalidRequest } from '../errors.ts';
import { formParams, required } from '../params.ts';
import { deleteAccessTokenById, findRefreshTokenByHash, revokeFamily } from '../repository.ts';
import { noStore } from '../respond.ts';
import { sha256Hex } from '../secrets.ts';

function ownedBy(client: OAuthClient, row: { client_id: string }): void {
  if (row.client_id !== client.id) throw new InvalidRequest('This token was issued to another client.');
}

async function revokeAccessToken(deps: OAuthDeps, client: OAuthClient, token: string): Promise<boolean> {
  const bearer = await deps.credentials.bearer(token);
  if (!bearer) return false;
  ownedBy(client, { client_id: bearer.client.id });
  await deleteAccessTokenById(deps.db, bearer.tokenId);
  return true;
}

async function revokeRefreshToken(deps: OAuthDeps, client: OAuthClient, token: string): Promise<boolean> {
  const row = await findRefreshTokenByHash(deps.db, sha256Hex(token));
  if (!row) return false;
  ownedBy(client, row);
  await revokeFamily(deps.db, row.family);
  return true;
}

export function revokeEndpoint(deps: OAuthDeps) {
  return async function revoke(request: FastifyRequest, reply: FastifyReply) {
    const params = formParams(request);
    const { client } = await authenticateClient(deps.db, request, params);
    const token = required(params, 'token');
    // The hint only orders the search (§2.1); an unknown hint is ignored.
    const order =
      params.token_type_hint === 'refresh_token'
        ? [revokeRefreshToken, revokeAccessToken]
        : [revokeAccessToken, revokeRefreshToken];
    for (const attempt of order) if (await attempt(deps, client, token)) break;
    return noStore(reply).code(200).send();
  };
}
