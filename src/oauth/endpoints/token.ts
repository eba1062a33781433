// POST /oauth/token (RFC 6749 §3.2): parse the form, authenticate the client, pick the grant, run it.
import type { FastifyReply, FastifyRequest } from 'fastify';
import { authenticateClient } from '../client-auth.ts';
import { APPLICATION_SUSPENDED, type OAuthClient } from '../clients.ts';
import type { TokenEndpointDeps } from '../deps.ts';
import { InvalidRequest, UnauthorizedClient, UnsupportedGrantType } from '../errors.ts';
import { ownerIsBanned } from '../repository.ts';
import type { TokenResponse } from '../issue.ts';
import { formParams, type Params } from '../params.ts';
import { noStore } from '../respond.ts';
import * as authorizationCode from '../grants/authorization-code.ts';
import * as refreshToken from '../grants/refresh-token.ts';
import * as clientCredentials from '../grants/client-credentials.ts';
import * as deviceCode from '../grants/device-code.ts';
import type { GrantRequest } from '../grants/grant-request.ts';
import { issuerOf } from './metadata.ts';
import { requestAct } from '../../http/client-address.ts';

interface GrantModule {
  grantType: string;
  handle(
    deps: TokenEndpointDeps,
    client: OAuthClient,
    params: Params,
    request: GrantRequest,
  ): Promise<TokenResponse>;
}

const GRANTS: ReadonlyMap<string, GrantModule> = new Map(
  [authorizationCode, refreshToken, clientCredentials, deviceCode].map((grant) => [grant.grantType, grant]),
);

export const GRANT_TYPES = [...GRANTS.keys()];

function selectGrant(params: Params): GrantModule {
  const type = params.grant_type;
  if (type === undefined) throw new InvalidRequest('The grant_type parameter is required.');
  const grant = GRANTS.get(type);
  if (!grant)
    throw new UnsupportedGrantType(
      `grant_type ${JSON.stringify(type)} is not supported; use one of: ${GRANT_TYPES.join(', ')}.`,
    );
  return grant;
}

export function tokenEndpoint(deps: TokenEndpointDeps) {
  return async function token(request: FastifyRequest, reply: FastifyReply) {
    const params = formParams(request);
    const { client } = await authenticateClient(deps.db, request, params);
    // A banned owner's application gets no token of any grant while the ban lasts.
    if (await ownerIsBanned(deps.db, client.ownerId)) throw new UnauthorizedClient(APPLICATION_SUSPENDED);
    const grant = selectGrant(params);
    const response = await grant.handle(deps, client, params, {
      issuer: issuerOf(request, deps.publicUrl),
      act: requestAct(request, 'oauth', client.id, deps.now(), deps.events),
    });
    return noStore(reply).code(200).send(response);
  };
}
