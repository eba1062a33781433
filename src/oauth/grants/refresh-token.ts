// grant_type=refresh_token (RFC 6749 §6) with rotation: each refresh token is used once and replaced;
// presenting a rotated one again means it leaked, so every token of its grant is revoked.
import type { OAuthClient } from '../clients.ts';
import type { OAuthDeps } from '../deps.ts';
import { InvalidGrant, InvalidScope } from '../errors.ts';
import { issueTokenPair, type TokenResponse } from '../issue.ts';
import { required, type Params } from '../params.ts';
import { claimRefreshToken, findRefreshTokenByHash, ownerIsBanned, revokeFamily } from '../repository.ts';
import { formatScope, parseScope, scopeCovers } from '../scopes.ts';
import { sha256Hex } from '../secrets.ts';

export const grantType = 'refresh_token';

async function refuseReuse(deps: OAuthDeps, family: string): Promise<never> {
  await revokeFamily(deps.db, family);
  throw new InvalidGrant(
    'The refresh token was already used; every token of this authorization has been revoked.',
  );
}

export async function handle(deps: OAuthDeps, client: OAuthClient, params: Params): Promise<TokenResponse> {
  const presented = required(params, 'refresh_token');
  const now = deps.now();
  const row = await findRefreshTokenByHash(deps.db, sha256Hex(presented));
  if (!row) throw new InvalidGrant('The refresh token is invalid or has been revoked.');
  if (row.client_id !== client.id) throw new InvalidGrant('The refresh token was issued to another client.');
  if (row.used !== 0) return refuseReuse(deps, row.family);
  if (Number(row.expires_at) <= now) throw new InvalidGrant('The refresh token has expired.');
  if (await ownerIsBanned(deps.db, row.user_id))
    throw new InvalidGrant('The account this refresh token acts for is banned.');

  // A narrower scope may be asked for (RFC 6749 §6); the new refresh token keeps the original one.
  const original = parseScope(row.scope);
  let scope = row.scope;
  if (params.scope !== undefined) {
    const asked = parseScope(params.scope);
    if (!scopeCovers(original, asked))
      throw new InvalidScope('The requested scope exceeds the scope originally granted.');
    scope = formatScope(asked);
  }

  const grant = { clientId: client.id, userId: row.user_id, scope, family: row.family };
  const issued = await deps.db
    .transaction()
    .execute(async (trx) =>
      (await claimRefreshToken(trx, row.id)) ? issueTokenPair(trx, grant, now, row.scope) : undefined,
    );
  return issued ?? refuseReuse(deps, row.family);
}
