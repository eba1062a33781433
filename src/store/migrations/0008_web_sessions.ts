import { type AnyDb, type MigrationFactory } from './kit.ts';

/**
 * Web sessions are their own kind of token: `session` = 1 marks the private token that a sign-in made,
 * and only such a token is a web session (an API token in the `rt` cookie is not). `password_at` is when
 * the password was last entered in that session (sudo mode). Rows that the web sign-in made before this
 * migration (private, privileges 0, expiring, described "web login") become sessions without a password
 * time, so they must enter the password again before a sensitive action.
 */
export const webSessions: MigrationFactory = () => ({
  async up(db: AnyDb) {
    await db.schema
      .alterTable('tokens')
      .addColumn('session', 'smallint', (c) => c.notNull().defaultTo(0))
      .execute();
    await db.schema.alterTable('tokens').addColumn('password_at', 'bigint').execute();
    await db
      .updateTable('tokens')
      .set({ session: 1 })
      .where('private', '=', 1)
      .where('privileges', '=', 0)
      .where('description', '=', 'web login')
      .where('expires_at', 'is not', null)
      .execute();
  },
  async down(db: AnyDb) {
    await db.schema.alterTable('tokens').dropColumn('password_at').execute();
    await db.schema.alterTable('tokens').dropColumn('session').execute();
  },
});
