// grant_type=authorization_code (RFC 6749 §4.1.3) with PKCE S256 (RFC 7636 §4.5–4.6).
// A code is exchanged once; presenting it again revokes every token it issued. Each exchange that reaches
// the proof checks (redirect_uri, code_verifier) takes one of the code's CODE_ATTEMPTS_MAX attempts, and
// only an exchange that passes them all is counted by the token endpoint's limits (src/oauth/token-limits.ts):
// a request that has not proven it acts for the user never spends the user's budget.
import { hasExpired } from '../../auth/live.ts';
import type { OAuthClient } from '../clients.ts';
import type { TokenEndpointDeps } from '../deps.ts';
import { InvalidGrant, InvalidRequest } from '../errors.ts';
import { CODE_ATTEMPTS_MAX, startGrant, type TokenResponse } from '../issue.ts';
import { required, type Params } from '../params.ts';
import { claimCode, findCodeByHash, takeCodeAttempt } from '../repository.ts';
import { findUserById } from '../../users/repository.ts';
import { isBanned } from '../../auth/privileges.ts';
import { readyToSign, withIdToken } from '../oidc.ts';
import type { GrantRequest } from './grant-request.ts';
import { endReusedGrant } from './reuse.ts';
import { PKCE_VALUE, sha256Hex, verifyPkceS256 } from '../secrets.ts';

export const grantType = 'authorization_code';

function readVerifier(params: Params): string {
  const verifier = params.code_verifier;
  if (verifier === undefined)
    throw new InvalidRequest('The code_verifier parameter is required: this server requires PKCE.');
  if (!PKCE_VALUE.test(verifier))
    throw new InvalidRequest('code_verifier must be 43–128 characters of A-Z, a-z, 0-9, "-", ".", "_", "~".');
  return verifier;
}

async function refuseReuse(
  deps: TokenEndpointDeps,
  grant: { family: string; userId: number; clientId: string },
): Promise<never> {
  await endReusedGrant(deps, grant, 'code');
  throw new InvalidGrant('The authorization code was already used; the tokens it issued have been revoked.');
}

export async function handle(
  deps: TokenEndpointDeps,
  client: OAuthClient,
  params: Params,
  request: GrantRequest,
): Promise<TokenResponse> {
  const code = required(params, 'code');
  const redirectUri = required(params, 'redirect_uri');
  const verifier = readVerifier(params);
  const now = deps.now();

  const codeHash = sha256Hex(code);
  const row = await findCodeByHash(deps.db, codeHash);
  if (!row) throw new InvalidGrant('The authorization code is invalid.');
  // The client first: another client presenting a used code must not revoke the grant it started.
  if (row.client_id !== client.id)
    throw new InvalidGrant('The authorization code was issued to another client.');
  const family = { family: codeHash, userId: row.user_id, clientId: client.id };
  if (row.used !== 0) return refuseReuse(deps, family);
  if (hasExpired(row.expires_at, now)) throw new InvalidGrant('The authorization code has expired.');
  if (!(await takeCodeAttempt(deps.db, codeHash, CODE_ATTEMPTS_MAX)))
    throw new InvalidGrant(
      'The authorization code was presented too many times with a wrong redirect_uri or code_verifier; it can no longer be exchanged.',
    );
  if (row.redirect_uri !== redirectUri)
    throw new InvalidGrant('redirect_uri does not match the one of the authorization request.');
  if (!verifyPkceS256(verifier, row.code_challenge))
    throw new InvalidGrant(
      'The code_verifier does not match the code_challenge of the authorization request.',
    );
  // Proven: the request acts for the user, and from here on it is counted.
  await deps.limits.admit(client.id, row.user_id);

  const user = await findUserById(deps.db, row.user_id);
  if (!user || isBanned(user.privileges))
    throw new InvalidGrant('The account of this authorization is banned.');

  const authTime = row.auth_time;
  const grant = { clientId: client.id, userId: row.user_id, scope: row.scope, family: codeHash, authTime };
  await readyToSign(deps.keys, row.scope);
  const issued = await deps.db
    .transaction()
    .execute((trx) => startGrant(trx, (db) => claimCode(db, codeHash), grant, now, deps.grants));
  if (!issued) return refuseReuse(deps, family);
  // OpenID Connect: the id_token carries the nonce the code remembers, for this exchange only.
  return withIdToken(deps.db, deps.keys, issued, {
    issuer: request.issuer,
    clientId: client.id,
    userId: row.user_id,
    authTime,
    nonce: row.nonce,
    now,
  });
}
