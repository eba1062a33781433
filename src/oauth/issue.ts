// Minting access and refresh tokens: random secrets, stored as SHA-256, with their lifetimes.
import type { Db } from '../store/database.ts';
import { insertAccessToken, insertRefreshToken } from './repository.ts';
import { newOAuthSecret, sha256Hex } from './secrets.ts';

export const CODE_TTL_S = 60;
export const ACCESS_TOKEN_TTL_S = 3600;
export const REFRESH_TOKEN_TTL_S = 30 * 24 * 3600;

export interface Grant {
  clientId: string;
  userId: number;
  /** normalised scope string (sorted, space-separated) */
  scope: string;
  /** the grant the tokens descend from: revoking it revokes them all */
  family: string;
}

/** RFC 6749 §5.1's successful response. */
export interface TokenResponse {
  access_token: string;
  token_type: 'Bearer';
  expires_in: number;
  refresh_token?: string;
  scope: string;
}

export async function issueAccessToken(db: Db, grant: Grant, now: number): Promise<TokenResponse> {
  const accessToken = newOAuthSecret();
  await insertAccessToken(db, {
    token_hash: sha256Hex(accessToken),
    client_id: grant.clientId,
    user_id: grant.userId,
    scope: grant.scope,
    family: grant.family,
    created_at: now,
    expires_at: now + ACCESS_TOKEN_TTL_S,
  });
  return {
    access_token: accessToken,
    token_type: 'Bearer',
    expires_in: ACCESS_TOKEN_TTL_S,
    scope: grant.scope,
  };
}

/** An access token and a refresh token of the same family (the refresh token keeps `refreshScope`). */
export async function issueTokenPair(
  db: Db,
  grant: Grant,
  now: number,
  refreshScope: string = grant.scope,
): Promise<TokenResponse> {
  const response = await issueAccessToken(db, grant, now);
  const refreshToken = newOAuthSecret();
  await insertRefreshToken(db, {
    token_hash: sha256Hex(refreshToken),
    client_id: grant.clientId,
    user_id: grant.userId,
    scope: refreshScope,
    family: grant.family,
    created_at: now,
    expires_at: now + REFRESH_TOKEN_TTL_S,
  });
  return { ...response, refresh_token: refreshToken };
}
