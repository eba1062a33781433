// POST /oauth/revoke (RFC 7009): a client revokes one of its own tokens. An unknown token is not an
// error (§2.2). Revoking a refresh token also revokes the access tokens of the same grant. An access token
// is found through the credential core, as an API request's bearer token is.
import type { FastifyReply, FastifyRequest } from 'fastify';
import { authenticateClient } from '../client-auth.ts';
import type { OAuthClient } from '../clients.ts';
import type { OAuthDeps } from '../deps.ts';
import { InvalidRequest } from '../errors.ts';
import { formParams, required } from '../params.ts';
import { deleteAccessTokenById, findRefreshTokenByHash, revokeGrant } from '../repository.ts';
import { recordEvent, withEvents, type Act } from '../../auth/security-log.ts';
import { requestAct } from '../../http/client-address.ts';
import { noStore } from '../respond.ts';
import { sha256Hex } from '../secrets.ts';

function ownedBy(client: OAuthClient, row: { client_id: string }): void {
  if (row.client_id !== client.id) throw new InvalidRequest('This token was issued to another client.');
}

type Revoke = (deps: OAuthDeps, client: OAuthClient, token: string, act: Act) => Promise<boolean>;

const revokeAccessToken: Revoke = async (deps, client, token, act) => {
  const bearer = await deps.credentials.bearer(token);
  if (!bearer) return false;
  ownedBy(client, { client_id: bearer.client.id });
  await withEvents(deps.db, act, async (trx) => {
    await deleteAccessTokenById(trx, bearer.tokenId);
    // An application's own token (no user) belongs in no account's log.
    if (bearer.kind === 'bearer')
      await recordEvent(trx, act, {
        userId: bearer.userId,
        kind: 'grant.revoked',
        clientId: client.id,
        detail: 'access token revoked by the application',
      });
  });
  return true;
};

const revokeRefreshToken: Revoke = async (deps, client, token, act) => {
  const row = await findRefreshTokenByHash(deps.db, sha256Hex(token));
  if (!row) return false;
  ownedBy(client, row);
  const grant = { family: row.family, userId: row.user_id, clientId: client.id };
  await revokeGrant(deps.db, grant, act, 'revoked by the application');
  return true;
};

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
    const act = requestAct(request, 'oauth', client.id, deps.now(), deps.events);
    for (const attempt of order) if (await attempt(deps, client, token, act)) break;
    return noStore(reply).code(200).send();
  };
}
