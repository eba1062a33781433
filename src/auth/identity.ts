// Who a request acts for: what a presented credential becomes (src/auth/credentials.ts), kept by `http/`
// on the request and read by every route. A discriminated union: each kind carries only its own fields.
export interface TokenIdentity {
  kind: 'token';
  tokenId: number;
  userId: number;
  username: string;
  userPrivileges: number;
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
  username: string;
  userPrivileges: number;
  /**
   * limit(scope privileges, the user's current privileges); 0 for a banned user, and 0 while the
   * application's owner is banned (bearerPrivileges)
   */
  privileges: number;
  /** the granted scopes, space-separated */
  scope: string;
  /** RFC 3339 */
  created: string;
  /** Unix seconds */
  createdAt: number;
  /** Unix seconds */
  expiresAt: number;
  client: BearerClient;
  /** the application's owner is banned: the token carries nothing (and userinfo refuses it) */
  ownerBanned: boolean;
}

/**
 * An access token of no user: the client credentials grant's, for its application alone. It reads itself
 * and is accepted by introspection and revocation; it carries no privileges and no user, so every
 * operation on a user's data refuses it (it has no userId to read by).
 */
export interface ClientIdentity {
  kind: 'client';
  tokenId: number;
  /** always 0: no user's privilege is the application's */
  privileges: 0;
  scope: string;
  /** RFC 3339 */
  created: string;
  /** Unix seconds */
  createdAt: number;
  /** Unix seconds */
  expiresAt: number;
  client: BearerClient;
  /** the application's owner is banned: its tokens are inactive to introspection */
  ownerBanned: boolean;
}

/** An OAuth access token: for a user (bearer) or for its application alone (client). */
export type AccessTokenIdentity = BearerIdentity | ClientIdentity;

export type Identity = { kind: 'none' } | TokenIdentity | AccessTokenIdentity;
export const NO_IDENTITY: Identity = Object.freeze({ kind: 'none' });
