// grant_type=refresh_token (RFC 6749 §6) with rotation: each refresh token is used once and replaced;
// presenting a rotated one again within its reuse window (SPENT_REFRESH_TOKEN_KEEP_S) means it leaked,
// so every token of its grant is revoked. Counted by the token endpoint's limits (src/oauth/token-limits.ts)
// only once the token is known to be live and this client's: an expired or rotated token is never counted.
import { hasExpired } from '../../auth/live.ts';
import type { OAuthClient } from '../clients.ts';
import type { TokenEndpointDeps } from '../deps.ts';
import { InvalidGrant, InvalidScope } from '../errors.ts';
import { rotateGrant, type TokenResponse } from '../issue.ts';
import { required, type Params } from '../params.ts';
import { findRefreshTokenByHash, ownerIsBanned } from '../repository.ts';
import { readyToSign, withIdToken } from '../oidc.ts';
import type { GrantRequest } from './grant-request.ts';
import { endReusedGrant } from './reuse.ts';
import { formatScope, parseScope, scopeCovers } from '../scopes.ts';
import { scopeNames } from '../../auth/scope.ts';
import { sha256Hex } from '../secrets.ts';

export const grantType = 'refresh_token';

const INVALID = 'The refresh token is invalid or has been revoked.';

async function refuseReuse(
  deps: TokenEndpointDeps,
  grant: { family: string; userId: number; clientId: string },
): Promise<never> {
  await endReusedGrant(deps, grant, 'refresh token');
  throw new InvalidGrant(
    'The refresh token was already used; every token of this authorization has been revoked.',
  );
}

export async function handle(
  deps: TokenEndpointDeps,
  client: OAuthClient,
  params: Params,
  request: GrantRequest,
): Promise<TokenResponse> {
  const presented = required(params, 'refresh_token');
  const now = deps.now();
  const row = await findRefreshTokenByHash(deps.db, sha256Hex(presented));
  if (!row) throw new InvalidGrant(INVALID);
  if (row.client_id !== client.id) throw new InvalidGrant('The refresh token was issued to another client.');
  if (row.used !== 0) {
    // Past its reuse window a rotated token is as good as swept: unknown, and its grant stays.
    if (hasExpired(row.expires_at, now)) throw new InvalidGrant(INVALID);
    return refuseReuse(deps, { family: row.family, userId: row.user_id, clientId: client.id });
  }
  if (hasExpired(row.expires_at, now)) throw new InvalidGrant('The refresh token has expired.');
  await deps.limits.admit(client.id, row.user_id);
  if (await ownerIsBanned(deps.db, row.user_id))
    throw new InvalidGrant('The account this refresh token acts for is banned.');

  // A narrower scope may be asked for (RFC 6749 §6); the new refresh token keeps the original one.
  let scope = row.scope;
  if (params.scope !== undefined) {
    const asked = parseScope(params.scope);
    if (!scopeCovers(scopeNames(row.scope), asked))
      throw new InvalidScope('The requested scope exceeds the scope originally granted.');
    scope = formatScope(asked);
  }

  const authTime = row.auth_time;
  const grant = { clientId: client.id, userId: row.user_id, scope, family: row.family, authTime };
  await readyToSign(deps.keys, scope);
  const issued = await deps.db
    .transaction()
    .execute((trx) => rotateGrant(trx, row.id, grant, now, row.scope));
  if (!issued) return refuseReuse(deps, { family: row.family, userId: row.user_id, clientId: client.id });
  // OpenID Connect Core §12.2: a refresh's id_token names the same user for the same client, with the
  // original sign-in's auth_time and no nonce.
  return withIdToken(deps.db, deps.keys, issued, {
    issuer: request.issuer,
    clientId: client.id,
    userId: row.user_id,
    authTime,
    nonce: null,
    now,
  });
}
