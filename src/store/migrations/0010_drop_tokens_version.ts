import { type AnyDb, type MigrationFactory } from './kit.ts';
import { tokensVersion } from './0006_tokens_version.ts';
import { tokensVersionLockOrder } from './0007_tokens_version_lock_order.ts';

/**
 * Without the listing snapshots (a user holds at most TOKENS_PER_USER_MAX tokens, and a deep page reads its
 * offset from the listing index alone), nothing reads users.tokens_version: its triggers and the column go,
 * and every write of a token is one statement again. Down restores them as 0006 and 0007 left them.
 *
 * Upgrade note: an instance of an older version still running reads the column on every authenticated
 * request; stop older instances before the first instance of this version starts (docs/running-at-scale.md).
 */
export const dropTokensVersion: MigrationFactory = (dialect) => ({
  up: (db: AnyDb) => tokensVersion(dialect).down!(db),
  async down(db: AnyDb) {
    await tokensVersion(dialect).up(db);
    await tokensVersionLockOrder(dialect).up(db);
  },
});
