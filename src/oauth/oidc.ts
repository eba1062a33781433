// OpenID Connect Core 1.0 on the code flow (and the device grant): the id_token a grant with the `openid`
// scope carries (signed by src/oauth/signing-keys.ts), and the claims about a user, which `userinfo`
// answers too. What a claim says comes from the scopes granted and nowhere else:
// - every id_token: iss, sub (the user id as a string), aud (the client id), iat, exp, auth_time (when the
//   user signed in), at_hash; nonce when the authorization request sent one (the code remembers it);
// - `profile`: preferred_username (the username as it is now).
// tokend keeps no email address, name or picture: no other claim is ever made.
import { createHash } from 'node:crypto';
import type { Db } from '../store/database.ts';
import { scopeGrants } from '../auth/scope.ts';
import { findUserById } from '../users/repository.ts';
import { ID_TOKEN_TTL_S, type SigningKeys } from './signing-keys.ts';
import type { TokenResponse } from './issue.ts';

/** The claims an id_token or userinfo may carry, for the discovery document. */
export const CLAIMS_SUPPORTED = [
  'iss',
  'sub',
  'aud',
  'exp',
  'iat',
  'auth_time',
  'nonce',
  'at_hash',
  'preferred_username',
] as const;

/** Whether a scope string grants OpenID Connect. */
export const grantsOpenId = (scope: string): boolean => scopeGrants(scope, 'openid');

/** The claims about the user that the scopes grant: sub always; preferred_username with `profile`. */
export function userClaims(
  user: { id: number; username: string },
  scope: string,
): { sub: string; preferred_username?: string } {
  const claims: { sub: string; preferred_username?: string } = { sub: String(user.id) };
  if (scopeGrants(scope, 'profile')) claims.preferred_username = user.username;
  return claims;
}

/** OpenID Connect Core §3.1.3.6: the left half of the SHA-256 of the access token, base64url. */
export const atHash = (accessToken: string): string =>
  createHash('sha256').update(accessToken, 'ascii').digest().subarray(0, 16).toString('base64url');

export interface IdTokenFacts {
  issuer: string;
  clientId: string;
  userId: number;
  /** when the user signed in (Unix seconds); null: unknown (left out) */
  authTime: number | null;
  /** the authorization request's nonce; null: none (a refresh never repeats it) */
  nonce: string | null;
  now: number;
}

/** The id_token's claims, in full. */
export function idTokenClaims(
  facts: IdTokenFacts,
  user: { id: number; username: string },
  response: Pick<TokenResponse, 'access_token' | 'scope'>,
): Record<string, unknown> {
  return {
    iss: facts.issuer,
    ...userClaims(user, response.scope),
    aud: facts.clientId,
    iat: facts.now,
    exp: facts.now + ID_TOKEN_TTL_S,
    ...(facts.authTime === null ? {} : { auth_time: facts.authTime }),
    ...(facts.nonce === null ? {} : { nonce: facts.nonce }),
    at_hash: atHash(response.access_token),
  };
}

/**
 * Before a grant spends what it exchanges (a code, a device code, a refresh token): when its scope grants
 * `openid`, that an id_token can be signed now, so that a signing failure (a SIGNING_KEY_SECRET that does
 * not open the current key) answers server_error with the code or refresh token still good for a retry.
 */
export async function readyToSign(keys: SigningKeys, scope: string): Promise<void> {
  if (grantsOpenId(scope)) await keys.canSign();
}

/**
 * The token response with an id_token added when its scope grants `openid` (and as it was otherwise). The
 * user is read as stored now (the username of preferred_username).
 */
export async function withIdToken(
  db: Db,
  keys: SigningKeys,
  response: TokenResponse,
  facts: IdTokenFacts,
): Promise<TokenResponse> {
  if (!grantsOpenId(response.scope)) return response;
  const user = await findUserById(db, facts.userId);
  if (!user) return response;
  const claims = idTokenClaims(facts, user, response);
  return { ...response, id_token: await keys.sign(claims) };
}

/**
 * The user an id_token_hint names (its `sub`), when the hint is an id_token this server signed for this
 * client: its signature by a key the JWKS publishes now, its issuer and its audience. An expired one is
 * still a hint (OpenID Connect Core §3.1.2.1). Undefined for anything else.
 */
export async function hintedSubject(
  keys: SigningKeys,
  hint: string,
  expected: { issuer: string; clientId: string },
): Promise<string | undefined> {
  const { compactVerify, createLocalJWKSet } = await import('jose');
  try {
    const { payload } = await compactVerify(hint, createLocalJWKSet(await keys.jwks()), {
      algorithms: ['RS256'],
    });
    const claims = JSON.parse(new TextDecoder().decode(payload)) as {
      iss?: unknown;
      aud?: unknown;
      sub?: unknown;
    };
    const audience = Array.isArray(claims.aud) ? claims.aud : [claims.aud];
    if (claims.iss !== expected.issuer || !audience.includes(expected.clientId)) return undefined;
    return typeof claims.sub === 'string' ? claims.sub : undefined;
  } catch {
    return undefined;
  }
}
