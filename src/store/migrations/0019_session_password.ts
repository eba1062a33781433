import { type AnyDb, type MigrationFactory } from './kit.ts';

/**
 * The fingerprint of the password a web session was opened with (src/auth/secret.ts passwordFingerprint):
 * a session ends when its owner's password changes, whoever changes it. Nullable with no default: API
 * tokens have none, and a session opened before it keeps working until it expires.
 */
export const sessionPassword: MigrationFactory = () => ({
  async up(db: AnyDb) {
    await db.schema.alterTable('tokens').addColumn('password_fingerprint', 'varchar(16)').execute();
  },
  async down(db: AnyDb) {
    await db.schema.alterTable('tokens').dropColumn('password_fingerprint').execute();
  },
});
