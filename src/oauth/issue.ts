// Minting access and refresh tokens: random secrets, stored as SHA-256, with their lifetimes; and the
// bounds on what OAuth keeps for a user, where the oldest end first (src/auth/mint.ts endOldestBeyond):
// - a user's live grants (a grant: the tokens one code started, its current refresh token not yet
//   rotated), per application (OAUTH_GRANTS_PER_CLIENT_MAX) and in all (OAUTH_GRANTS_PER_USER_MAX):
//   a new grant beyond either ends the grant refreshed longest ago, every token of it;
// - a grant's access tokens: the newest ACCESS_TOKENS_PER_GRANT; a refresh ends the older ones;
// - a user's codes not yet exchanged, by the same two numbers: a new code beyond them ends the oldest;
// - a rotated refresh token is kept SPENT_REFRESH_TOKEN_KEEP_S for reuse detection, then swept;
// - an application's own tokens (client credentials, no user): OAUTH_GRANTS_PER_CLIENT_MAX live ones.
// The token endpoint's rate limits (src/oauth/token-limits.ts) bound how fast rotated tokens pile up.
import type { OAuthGrantBounds } from '../config.ts';
import { endOldestBeyond } from '../auth/mint.ts';
import type { Db } from '../store/database.ts';
import {
  accessTokenIdsNewestFirst,
  claimRefreshToken,
  deleteAccessTokens,
  deleteCodes,
  insertAccessToken,
  insertRefreshToken,
  liveGrantFamilies,
  lockClient,
  lockUser,
  revokeFamilies,
  unexchangedCodes,
} from './repository.ts';
import { newOAuthSecret, sha256Hex } from './secrets.ts';

export const CODE_TTL_S = 60;
/**
 * How many times a code may be presented with its proofs (redirect_uri, code_verifier): each exchange that
 * gets that far takes one attempt, and once they are all taken the code can no longer be exchanged
 * (RFC 6749 §10.5 lets a server end a code early). The client the code was issued to needs one; the rest
 * leave room for retries after a 429. So whoever intercepts a code cannot guess its verifier, and a flood
 * of wrong guesses ends with the code, never with the user's token requests, which it does not count.
 */
export const CODE_ATTEMPTS_MAX = 5;
export const ACCESS_TOKEN_TTL_S = 3600;
export const REFRESH_TOKEN_TTL_S = 30 * 24 * 3600;
/**
 * How long a rotated refresh token is kept, so that presenting it again is recognised as reuse and ends
 * its grant: a day. A client in use refreshes at least once per access token lifetime (an hour), so a
 * stolen token used by both the thief and the client is presented twice well within it; after it, the
 * rotated token is refused like an unknown one (the grant stays), and its row is swept.
 */
export const SPENT_REFRESH_TOKEN_KEEP_S = 24 * 3600;
/**
 * Live access tokens a grant keeps: the newest and the one before it, so that requests a client sent
 * with its previous access token while refreshing still pass. A refresh ends the older ones.
 */
export const ACCESS_TOKENS_PER_GRANT = 2;

export interface Grant {
  clientId: string;
  userId: number;
  /** normalised scope string (sorted, space-separated) */
  scope: string;
  /** the grant the tokens descend from: revoking it revokes them all */
  family: string;
  /** OpenID Connect: when the user signed in for this grant (Unix seconds), kept with its refresh tokens */
  authTime?: number | null;
}

/** RFC 6749 §5.1's successful response. */
export interface TokenResponse {
  access_token: string;
  token_type: 'Bearer';
  expires_in: number;
  refresh_token?: string;
  scope: string;
  /** OpenID Connect: with the `openid` scope (src/oauth/oidc.ts) */
  id_token?: string;
}

/** A grant's access token; `userId` null: an application's own (client credentials), for no user. */
export async function issueAccessToken(
  db: Db,
  grant: Omit<Grant, 'userId'> & { userId: number | null },
  now: number,
): Promise<TokenResponse> {
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
    auth_time: grant.authTime ?? null,
  });
  return { ...response, refresh_token: refreshToken };
}

/**
 * A new grant: claims what starts it (`claim`: a code, or an approved device code, marked used) and issues
 * the grant's first access and refresh tokens; the user's grants beyond the bounds, with this application
 * and in all, end, the one refreshed longest ago first. Undefined when the claim failed (another request
 * won the race). Run it in a transaction; it locks the user's row before anything else (lockUser: MySQL's
 * foreign key checks would otherwise share-lock it first, and two exchanges would each wait for the other).
 */
export async function startGrant(
  db: Db,
  claim: (db: Db) => Promise<boolean>,
  grant: Grant,
  now: number,
  bounds: OAuthGrantBounds,
): Promise<TokenResponse | undefined> {
  await lockUser(db, grant.userId);
  if (!(await claim(db))) return undefined;
  const response = await issueTokenPair(db, grant, now);
  const end = (families: string[]) => revokeFamilies(db, families);
  await endOldestBeyond(
    bounds.perClient,
    (offset, limit) => liveGrantFamilies(db, grant.userId, grant.clientId, offset, limit),
    end,
  );
  await endOldestBeyond(
    bounds.perUser,
    (offset, limit) => liveGrantFamilies(db, grant.userId, undefined, offset, limit),
    end,
  );
  return response;
}

/**
 * A refresh: rotates the refresh token `spentId` (kept SPENT_REFRESH_TOKEN_KEEP_S for reuse detection)
 * and issues the grant's next pair; the grant's access tokens beyond ACCESS_TOKENS_PER_GRANT end.
 * Undefined when the token was already rotated or its grant ended (another request won the race). Run
 * it in a transaction; it locks the user's row before anything else, as startGrant does.
 */
export async function rotateGrant(
  db: Db,
  spentId: number,
  grant: Grant,
  now: number,
  refreshScope: string,
): Promise<TokenResponse | undefined> {
  await lockUser(db, grant.userId);
  if (!(await claimRefreshToken(db, spentId, now + SPENT_REFRESH_TOKEN_KEEP_S))) return undefined;
  const response = await issueTokenPair(db, grant, now, refreshScope);
  await endOldestBeyond(
    ACCESS_TOKENS_PER_GRANT,
    (offset, limit) => accessTokenIdsNewestFirst(db, { family: grant.family }, offset, limit),
    (ids) => deleteAccessTokens(db, ids),
  );
  return response;
}

/**
 * The client credentials grant (RFC 6749 §4.4): an access token of the application alone, for no user,
 * with no refresh token; it lives ACCESS_TOKEN_TTL_S like any access token, and the application asks for
 * another when it ends. Each is a grant of its own (a random family). An application keeps at most
 * `bounds.perClient` (OAUTH_GRANTS_PER_CLIENT_MAX) live tokens of its own: a new one beyond ends the
 * oldest, so one application cannot pile up rows. Run it in a transaction; it locks the client's row
 * first, so two requests never end each other's tokens out of order.
 */
export async function issueApplicationToken(
  db: Db,
  clientId: string,
  scope: string,
  now: number,
  bounds: OAuthGrantBounds,
): Promise<TokenResponse> {
  await lockClient(db, clientId);
  const family = sha256Hex(newOAuthSecret());
  const response = await issueAccessToken(db, { clientId, userId: null, scope, family }, now);
  await endOldestBeyond(
    bounds.perClient,
    (offset, limit) => accessTokenIdsNewestFirst(db, { applicationOwn: clientId }, offset, limit),
    (ids) => deleteAccessTokens(db, ids),
  );
  return response;
}

/**
 * After a code was stored: the user's unexchanged codes beyond the bounds end, the oldest first. The new
 * code always stays (codes carry their time in seconds, so several of one second have no order).
 */
export async function endCodesBeyond(
  db: Db,
  code: { code_hash: string; user_id: number; client_id: string },
  bounds: OAuthGrantBounds,
): Promise<void> {
  const end = (hashes: string[]) => deleteCodes(db, hashes);
  const others = (clientId: string | undefined) => (offset: number, limit: number) =>
    unexchangedCodes(db, code.user_id, clientId, code.code_hash, offset, limit);
  await endOldestBeyond(bounds.perClient - 1, others(code.client_id), end);
  await endOldestBeyond(bounds.perUser - 1, others(undefined), end);
}
