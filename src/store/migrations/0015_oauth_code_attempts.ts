import { type AnyDb, type MigrationFactory } from './kit.ts';

/**
 * How many times each authorization code was presented with its proofs (redirect_uri, code_verifier):
 * past CODE_ATTEMPTS_MAX (src/oauth/issue.ts) it can no longer be exchanged. Codes made before this
 * migration start at 0.
 */
export const oauthCodeAttempts: MigrationFactory = () => ({
  async up(db: AnyDb) {
    await db.schema
      .alterTable('oauth_codes')
      .addColumn('attempts', 'smallint', (c) => c.notNull().defaultTo(0))
      .execute();
  },
  async down(db: AnyDb) {
    await db.schema.alterTable('oauth_codes').dropColumn('attempts').execute();
  },
});
