import { createHash } from 'node:crypto';
import { type AnyDb, type MigrationFactory } from './kit.ts';

/**
 * One owner's applications have different names (src/oauth/clients.ts `clientNameKey`): each gets the key
 * its name compares by, and a unique index on (owner_id, name_key) holds the rule for every writer
 * whatever the database's collation (MySQL/MariaDB would otherwise compare names case- and
 * accent-insensitively, SQLite and PostgreSQL exactly). The key is a SHA-256 hex digest, so its length
 * is fixed however long the name's normal form grows. Applications registered before this migration
 * may share a name: the oldest of each keeps it, the others become "Name (2)", "Name (3)" … Also an index
 * on oauth_consents.client_id: the applications page counts each application's users, and a deleted
 * application's approvals are found by it.
 */
export const oauthClientOwners: MigrationFactory = (dialect) => {
  // The rule of src/oauth/clients.ts `clientNameKey` (src/users/username.ts `usernameSafe`, hashed) as
  // this migration shipped it: the store may not import the folders above it, and a migration never changes.
  const keyOf = (name: string): string =>
    createHash('sha256')
      .update(
        name.trim().normalize('NFKC').toUpperCase().toLowerCase().normalize('NFKC').replaceAll(' ', '_'),
      )
      .digest('hex');
  return {
    async up(db: AnyDb) {
      await db.schema.alterTable('oauth_clients').addColumn('name_key', 'char(64)').execute();
      let after = '';
      for (;;) {
        const rows = (await db
          .selectFrom('oauth_clients')
          .select(['id', 'name'])
          .where('id', '>', after)
          .orderBy('id')
          .limit(500)
          .execute()) as Array<{ id: string; name: string }>;
        for (const row of rows)
          await db
            .updateTable('oauth_clients')
            .set({ name_key: keyOf(row.name) })
            .where('id', '=', row.id)
            .execute();
        if (rows.length < 500) break;
        after = rows[rows.length - 1]!.id;
      }
      const shared = (await db
        .selectFrom('oauth_clients')
        .select(['owner_id', 'name_key'])
        .groupBy(['owner_id', 'name_key'])
        .having((eb) => eb.fn.countAll(), '>', 1)
        .execute()) as Array<{ owner_id: number; name_key: string }>;
      for (const group of shared) {
        const rows = (await db
          .selectFrom('oauth_clients')
          .select(['id', 'name'])
          .where('owner_id', '=', group.owner_id)
          .where('name_key', '=', group.name_key)
          .orderBy('created_at')
          .orderBy('id')
          .execute()) as Array<{ id: string; name: string }>;
        for (const row of rows.slice(1)) {
          for (let n = 2; ; n++) {
            const suffix = ` (${n})`;
            const name = `${[...row.name].slice(0, 255 - suffix.length).join('')}${suffix}`;
            const key = keyOf(name);
            const taken = await db
              .selectFrom('oauth_clients')
              .select('id')
              .where('owner_id', '=', group.owner_id)
              .where('name_key', '=', key)
              .executeTakeFirst();
            if (taken) continue;
            await db
              .updateTable('oauth_clients')
              .set({ name, name_key: key })
              .where('id', '=', row.id)
              .execute();
            break;
          }
        }
      }
      await db.schema
        .createIndex('oauth_clients_owner_name')
        .on('oauth_clients')
        .columns(['owner_id', 'name_key'])
        .unique()
        .execute();
      await db.schema.createIndex('oauth_consents_client').on('oauth_consents').column('client_id').execute();
    },
    async down(db: AnyDb) {
      const dropOn = (name: string, table: string) => {
        const drop = db.schema.dropIndex(name);
        return (dialect === 'mysql' ? drop.on(table) : drop).execute();
      };
      // MySQL may have let these serve the foreign keys on owner_id and client_id: plain ones take over first.
      if (dialect === 'mysql') {
        await db.schema
          .createIndex('oauth_clients_owner_id')
          .on('oauth_clients')
          .column('owner_id')
          .execute();
        await db.schema
          .createIndex('oauth_consents_client_id')
          .on('oauth_consents')
          .column('client_id')
          .execute();
      }
      await dropOn('oauth_consents_client', 'oauth_consents');
      await dropOn('oauth_clients_owner_name', 'oauth_clients');
      await db.schema.alterTable('oauth_clients').dropColumn('name_key').execute();
    },
  };
};
