import { type AnyDb, type MigrationFactory } from './kit.ts';

/**
 * The listing filters on expires_at as well as user and visibility: with expires_at in the index, skipping
 * to a deep page reads index entries only, never table rows (bench/HISTORY.md). The new index is made first:
 * on MySQL the old one serves the foreign key on user_id until then.
 */
export const listingIndex: MigrationFactory = (dialect) => {
  const swap = async (db: AnyDb, create: string, columns: string[], drop: string) => {
    await db.schema.createIndex(create).on('tokens').columns(columns).execute();
    const dropIndex = db.schema.dropIndex(drop);
    await (dialect === 'mysql' ? dropIndex.on('tokens') : dropIndex).execute();
  };
  return {
    up: (db: AnyDb) =>
      swap(
        db,
        'tokens_user_private_id_expiry',
        ['user_id', 'private', 'id', 'expires_at'],
        'tokens_user_private_id',
      ),
    down: (db: AnyDb) =>
      swap(db, 'tokens_user_private_id', ['user_id', 'private', 'id'], 'tokens_user_private_id_expiry'),
  };
};
