// The OAuth access tokens as a kind of credential of the credential core (src/auth/credentials.ts), which
// app.ts registers with it: the core looks them up, by hash and live by its rule, through this query;
// a bearer identity carries its scopes' privileges, nothing while its application's owner is banned (the
// owner's privileges come with the same row, through the client's join: no query of their own); a token of
// no user (the client credentials grant) is the application's own; ending one ends its whole grant.
import type { BearerTokens } from '../auth/credential-lookup.ts';
import { revokeGrantOfAccessToken } from './repository.ts';
import { scopePrivileges } from './scopes.ts';

export const bearerTokens: BearerTokens = {
  query: (db) =>
    db
      .selectFrom('oauth_access_tokens')
      .innerJoin('oauth_clients', 'oauth_clients.id', 'oauth_access_tokens.client_id')
      // The token's user; for a token of no user (client credentials), the application's owner, whom the
      // core reads only to know whether the owner is banned.
      .innerJoin('users', (join) =>
        join.on((eb) =>
          eb('users.id', '=', eb.fn.coalesce('oauth_access_tokens.user_id', 'oauth_clients.owner_id')),
        ),
      )
      .innerJoin('users as owners', 'owners.id', 'oauth_clients.owner_id')
      .select([
        'oauth_access_tokens.id',
        'oauth_access_tokens.user_id',
        'oauth_access_tokens.scope',
        'oauth_access_tokens.created_at',
        'oauth_access_tokens.expires_at',
        'oauth_clients.id as client_id',
        'oauth_clients.name as client_name',
        'oauth_clients.owner_id as client_owner_id',
        'oauth_clients.avatar as client_avatar',
        'owners.privileges as client_owner_privileges',
        'users.username',
        'users.privileges as user_privileges',
        'oauth_access_tokens.token_hash',
      ]),
  scopePrivileges,
  endGrant: revokeGrantOfAccessToken,
};
