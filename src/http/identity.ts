// Who a request acts for: resolved once per request, only on routes that declare `config: { identify: true }`.
// One indexed lookup joins the token with its owner's current privileges, so a demoted or banned owner
// loses privileges at once; nothing is cached between requests.
import { effectivePrivileges } from '../privileges.ts';
import { hashTokenSecret } from '../tokens/secret.ts';
import type { TokenWithOwner } from '../tokens/repository.ts';
import type { LastUsedBatcher } from '../tokens/last-used.ts';
import type { Credential } from './credentials.ts';

export interface TokenIdentity {
  kind: 'token';
  tokenId: number;
  userId: number;
  userPrivileges: number;
  storedPrivileges: number;
  /** limit(stored, owner's current privileges); 0 for a banned owner */
  privileges: number;
  description: string;
  lastUpdated: number;
}

export interface BearerClient {
  id: string;
  name: string;
  owner_id: number;
  avatar: string;
}

export interface BearerIdentity {
  kind: 'bearer';
  tokenId: number;
  userId: number;
  userPrivileges: number;
  /** limit(scope privileges, owner's current privileges); 0 for a banned owner */
  privileges: number;
  /** the granted scopes, space-separated */
  scope: string;
  /** RFC 3339 */
  created: string;
  client: BearerClient;
}

export type Identity = { kind: 'none' } | TokenIdentity | BearerIdentity;
export const NO_IDENTITY: Identity = Object.freeze({ kind: 'none' });

/** Bearer (OAuth) access tokens, provided by the authorization server when it is enabled. */
export interface BearerTokenStore {
  /** The live (unexpired) access token with this secret hash, with effective privileges computed. */
  find(secretHash: string): Promise<BearerIdentity | undefined>;
  /** Ends the grant this access token belongs to: the token, its refresh token and their siblings. */
  revokeGrant(tokenId: number): Promise<void>;
}

export interface IdentityDeps {
  /** The token with this secret and its owner. */
  findToken: (secret: string) => Promise<TokenWithOwner | undefined>;
  bearerTokens: BearerTokenStore | undefined;
  lastUsed: LastUsedBatcher;
  now: () => number;
}

/** The request's identity: at once when the request carries no credential, else a promise of it. */
export function makeIdentify(deps: IdentityDeps) {
  const fromRow = (row: TokenWithOwner | undefined): Identity => {
    if (!row) return NO_IDENTITY;
    const now = deps.now();
    deps.lastUsed.touch(row.id, now);
    return {
      kind: 'token',
      tokenId: row.id,
      userId: row.user_id,
      userPrivileges: row.user_privileges,
      storedPrivileges: row.privileges,
      privileges: effectivePrivileges(row.privileges, row.user_privileges),
      description: row.description,
      lastUpdated: now,
    };
  };
  const byToken = (secret: string): Promise<Identity> => deps.findToken(secret).then(fromRow);
  const byBearerThenToken = async (secret: string, bearers: BearerTokenStore): Promise<Identity> =>
    (await bearers.find(hashTokenSecret(secret))) ?? (await byToken(secret));

  return function identify(credential: Credential | undefined): Identity | Promise<Identity> {
    if (!credential) return NO_IDENTITY;
    if (credential.source === 'bearer' && deps.bearerTokens)
      return byBearerThenToken(credential.value, deps.bearerTokens);
    return byToken(credential.value);
  };
}
