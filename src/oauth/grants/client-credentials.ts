// grant_type=client_credentials (RFC 6749 §4.4): a confidential application asks for a token of its own,
// acting for no user. Only a confidential client (its secret checked by client-auth.ts) may; a public
// one is unauthorized_client (as is an application whose owner is banned, for every grant: token.ts). No scope may be asked: every
// scope of this server (read_confidential, write, bancho) acts for a user, and the token has none. The
// token reads itself (GET /v1/tokens/self), is active to introspection without sub or username, can be
// revoked, and is refused wherever a user is needed (src/http/bearer-challenge.ts). No refresh token: the
// application asks again when it expires (ACCESS_TOKEN_TTL_S). Bounded per application
// (issueApplicationToken) and counted by the token endpoint's per-application limit.
import { isConfidential, type OAuthClient } from '../clients.ts';
import type { TokenEndpointDeps } from '../deps.ts';
import { InvalidScope, UnauthorizedClient } from '../errors.ts';
import { issueApplicationToken, type TokenResponse } from '../issue.ts';
import type { Params } from '../params.ts';
import { parseScope } from '../scopes.ts';

export const grantType = 'client_credentials';

/** The one scope an application's own token may carry: none. */
export const APPLICATION_TOKEN_SCOPE = '';

export async function handle(
  deps: TokenEndpointDeps,
  client: OAuthClient,
  params: Params,
): Promise<TokenResponse> {
  if (!isConfidential(client))
    throw new UnauthorizedClient(
      'The client credentials grant is for confidential clients: a public client has no secret to prove it is the application.',
    );
  // Unknown scopes are named as elsewhere; a known one is refused for what it is.
  const asked = parseScope(params.scope);
  if (asked.length > 0)
    throw new InvalidScope(
      `A client credentials token acts for no user, and every scope here acts for one (${asked.join(', ')}): ask for no scope.`,
    );
  await deps.limits.admitApplication(client.id);
  const now = deps.now();
  return deps.db
    .transaction()
    .execute((trx) => issueApplicationToken(trx, client.id, APPLICATION_TOKEN_SCOPE, now, deps.grants));
}
