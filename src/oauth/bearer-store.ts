// The BearerTokenStore of src/http/identity.ts: live access tokens, with effective privileges
// = limit(scope privileges, owner's current privileges), 0 for a banned owner.
import type { BearerIdentity, BearerTokenStore } from '../http/identity.ts';
import { effectivePrivileges } from '../privileges.ts';
import type { Db } from '../store/database.ts';
import { bearerLookup, revokeGrantOfAccessToken, type BearerRow } from './repository.ts';
import { scopePrivileges } from './scopes.ts';

/** Unix seconds as RFC 3339 (UTC, whole seconds). */
export const rfc3339 = (seconds: number): string =>
  new Date(seconds * 1000).toISOString().replace('.000Z', 'Z');

function toIdentity(row: BearerRow): BearerIdentity {
  const userPrivileges = Number(row.user_privileges);
  return {
    kind: 'bearer',
    tokenId: row.id,
    userId: row.user_id,
    userPrivileges,
    privileges: effectivePrivileges(scopePrivileges(row.scope), userPrivileges),
    scope: row.scope,
    created: rfc3339(Number(row.created_at)),
    client: {
      id: row.client_id,
      name: row.client_name,
      owner_id: row.client_owner_id,
      avatar: row.client_avatar,
    },
  };
}

export class OAuthBearerTokens implements BearerTokenStore {
  private readonly db: Db;
  private readonly now: () => number;
  private readonly lookup: ReturnType<typeof bearerLookup>;
  constructor(db: Db, now: () => number) {
    this.db = db;
    this.now = now;
    this.lookup = bearerLookup(db);
  }

  async find(secretHash: string): Promise<BearerIdentity | undefined> {
    const row = await this.lookup(secretHash, this.now());
    return row ? toIdentity(row) : undefined;
  }

  async revokeGrant(tokenId: number): Promise<void> {
    await revokeGrantOfAccessToken(this.db, tokenId);
  }
}
