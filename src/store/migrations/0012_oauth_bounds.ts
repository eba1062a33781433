import { type AnyDb, type MigrationFactory } from './kit.ts';

/**
 * What the bounds on OAuth rows and their sweep read (src/oauth/issue.ts, src/oauth/repository.ts):
 * - a user's live grants (unrotated refresh tokens), per application and in all, newest first; a user's
 *   unexchanged codes likewise. Rows of other states and users are never visited, and the count per user
 *   that is sorted is at most the bound itself;
 * - a user's access tokens per application (connected applications, revoking one application);
 * - expires_at on each table, so that the sweep deletes in batches without reading the whole table.
 * A rotated refresh token is kept a day from its rotation (SPENT_REFRESH_TOKEN_KEEP_S), its expires_at
 * then marking the end of that window; the ones rotated before this migration are kept a day from it.
 */
export const oauthBounds: MigrationFactory = (dialect) => {
  const indexes: ReadonlyArray<readonly [string, string, string[]]> = [
    ['oauth_refresh_tokens_live', 'oauth_refresh_tokens', ['user_id', 'used', 'client_id', 'id']],
    ['oauth_refresh_tokens_expires_at', 'oauth_refresh_tokens', ['expires_at']],
    ['oauth_access_tokens_user_client', 'oauth_access_tokens', ['user_id', 'client_id']],
    ['oauth_access_tokens_expires_at', 'oauth_access_tokens', ['expires_at']],
    ['oauth_codes_live', 'oauth_codes', ['user_id', 'used', 'client_id', 'created_at']],
    ['oauth_codes_expires_at', 'oauth_codes', ['expires_at']],
  ];
  return {
    async up(db: AnyDb) {
      const keepUntil = Math.floor(Date.now() / 1000) + 24 * 3600;
      await db
        .updateTable('oauth_refresh_tokens')
        .set({ expires_at: keepUntil })
        .where('used', '=', 1)
        .where('expires_at', '>', keepUntil)
        .execute();
      for (const [name, table, columns] of indexes)
        await db.schema.createIndex(name).on(table).columns(columns).execute();
    },
    async down(db: AnyDb) {
      for (const [name, table, columns] of [...indexes].reverse()) {
        // MySQL may have dropped the index it made for the foreign key on user_id once one of these could
        // serve it: a plain one takes over first.
        if (dialect === 'mysql' && columns[0] === 'user_id')
          await db.schema.createIndex(`${table}_user_id`).on(table).column('user_id').execute();
        const drop = db.schema.dropIndex(name);
        await (dialect === 'mysql' ? drop.on(table) : drop).execute();
      }
    },
  };
};
