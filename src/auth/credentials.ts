// The credential core: a presented secret becomes an identity here and nowhere else. An API token, a
// bearer (OAuth access) token and a web session are each found through the same path: hash the secret,
// one indexed query shared by the lookups of one turn of the event loop (credential-lookup.ts), one expiry
// rule read from one clock. The core records the use of an API token and computes effective privileges:
// limit() of what the credential carries against the owner's privileges as stored now, 0 for a banned
// owner. `http/` only reads the credential from the request and keeps the identity this returns
// (identity.ts); the OAuth server's introspection and revocation find an access token here too. The OAuth
// access tokens are a kind the OAuth server registers (BearerTokens, given by app.ts): their query and
// scopes are its own.
import type { Clock } from './clock.ts';
import {
  credentialLookup,
  type BearerRow,
  type BearerTokens,
  type LookupStore,
  type TokenWithOwner,
} from './credential-lookup.ts';
import { NO_IDENTITY, type AccessTokenIdentity, type Identity, type TokenIdentity } from './identity.ts';
import { bearerPrivileges, effectivePrivileges, isBanned, requestedPrivileges } from './privileges.ts';
import type { LastUsedBatcher } from './last-used.ts';
import { deleteTokenById } from './revocation.ts';
import type { Session } from './sessions.ts';
import { recordEvent, withEvents, type Act } from './security-log.ts';
import { isoTime } from '../utc-time.ts';

/** Unix seconds as RFC 3339 (UTC, whole seconds). */
export const rfc3339 = isoTime;

export interface CredentialCore {
  /**
   * Who an API request acts for, given the secret it presented (`bearer`: in an Authorization: Bearer
   * header, where an OAuth access token is looked for first, then an API token). At once when there is
   * no secret, else a promise.
   */
  identify(secret: string | undefined, bearer: boolean, address?: string): Identity | Promise<Identity>;
  /** The live web session with this secret, or undefined for anything else (an API or bearer token too). */
  session(secret: string | undefined): Promise<Session | undefined>;
  /** The live OAuth access token with this secret, or undefined (introspection and revocation ask). */
  bearer(secret: string): Promise<AccessTokenIdentity | undefined>;
  /**
   * Ends the credential an identity came from: the API token, or the whole grant of an access token (the
   * security log's `token.revoked` or, for a user's grant, `app.withdrawn`, reason self).
   */
  end(identity: TokenIdentity | AccessTokenIdentity, act: Act): Promise<void>;
}

export interface CredentialCoreDeps {
  store: LookupStore;
  clock: Clock;
  lastUsed: LastUsedBatcher;
  /** the OAuth access tokens (src/oauth/bearer.ts) */
  bearerTokens: BearerTokens;
}

export function credentialCore({ store, clock, lastUsed, bearerTokens }: CredentialCoreDeps): CredentialCore {
  const lookup = credentialLookup(store, clock, bearerTokens);

  const fromToken = (row: TokenWithOwner | undefined, address: string | undefined): Identity => {
    if (!row) return NO_IDENTITY;
    lastUsed.touch(row.id, row.at, address);
    return {
      kind: 'token',
      tokenId: row.id,
      userId: row.user_id,
      username: row.username,
      userPrivileges: row.user_privileges,
      privileges: effectivePrivileges(requestedPrivileges(row, row.familyToken), row.user_privileges),
      description: row.description,
      lastUpdated: row.at,
    };
  };
  const fromBearer = (row: BearerRow): AccessTokenIdentity => {
    const client = {
      id: row.client_id,
      name: row.client_name,
      owner_id: row.client_owner_id,
      avatar: row.client_avatar,
    };
    if (row.user_id === null)
      return {
        kind: 'client',
        tokenId: row.id,
        privileges: 0,
        scope: row.scope,
        created: rfc3339(row.created_at),
        createdAt: row.created_at,
        expiresAt: row.expires_at,
        client,
        ownerBanned: isBanned(row.client_owner_privileges),
      };
    return {
      kind: 'bearer',
      tokenId: row.id,
      userId: row.user_id,
      username: row.username,
      userPrivileges: row.user_privileges,
      privileges: bearerPrivileges(
        bearerTokens.scopePrivileges(row.scope),
        row.user_privileges,
        row.client_owner_privileges,
      ),
      scope: row.scope,
      created: rfc3339(row.created_at),
      createdAt: row.created_at,
      expiresAt: row.expires_at,
      client,
      ownerBanned: isBanned(row.client_owner_privileges),
    };
  };
  const byToken = (secret: string, address: string | undefined): Promise<Identity> =>
    lookup.token(secret).then((row) => fromToken(row, address));
  const byBearerThenToken = async (secret: string, address: string | undefined): Promise<Identity> => {
    const row = await lookup.bearer(secret);
    return row ? fromBearer(row) : byToken(secret, address);
  };

  return {
    identify(secret, bearer, address) {
      if (secret === undefined) return NO_IDENTITY;
      return bearer ? byBearerThenToken(secret, address) : byToken(secret, address);
    },
    async session(secret) {
      if (!secret) return undefined;
      const row = await lookup.token(secret);
      // A session is a row tokend's sign-in made, found by its SHA-256 hash: never an MD5-form row, whatever
      // its columns say (a family row is hanayo's sign-in, not tokend's).
      if (!row || row.session !== 1 || row.md5Form) return undefined;
      return {
        id: row.id,
        userId: row.user_id,
        username: row.username,
        userPrivileges: row.user_privileges,
        passwordAt: row.password_at,
        signedInAt: row.created_at,
      };
    },
    async bearer(secret) {
      const row = await lookup.bearer(secret);
      return row && fromBearer(row);
    },
    async end(identity, act) {
      if (identity.kind === 'token') {
        lastUsed.forget(identity.tokenId);
        await deleteTokenById(store.db, identity.tokenId, act, 'self');
      } else {
        // The whole grant: a refresh token left behind would mint a new access token at once. A client
        // credentials token is a grant of its own (its family is its alone).
        await withEvents(store.db, act, async (trx) => {
          await bearerTokens.endGrant(trx, identity.tokenId);
          // An application's own token is no user's: there is no account whose log it belongs in.
          if (identity.kind === 'bearer')
            await recordEvent(trx, act, {
              userId: identity.userId,
              kind: 'app.withdrawn',
              clientId: identity.client.id,
              detail: 'self',
            });
        });
      }
    },
  };
}
