import { type AnyDb, type MigrationFactory } from './kit.ts';

/**
 * The events channel's outbox (src/auth/event-outbox.ts): each event published on Redis is written here
 * in the transaction of the change it announces and deleted once published, so that nothing is published
 * before its change commits and nothing committed goes unpublished. `event_outbox_state` holds the last
 * event id given (`sequence`: ids follow commit order) and the lease of the process publishing (`drain`).
 */
export const eventOutbox: MigrationFactory = () => ({
  async up(db: AnyDb) {
    await db.schema
      .createTable('event_outbox')
      .addColumn('id', 'bigint', (c) => c.primaryKey().notNull())
      .addColumn('created_at', 'bigint', (c) => c.notNull())
      .addColumn('message', 'text', (c) => c.notNull())
      .execute();
    await db.schema
      .createTable('event_outbox_state')
      .addColumn('name', 'varchar(16)', (c) => c.primaryKey().notNull())
      .addColumn('value', 'bigint', (c) => c.notNull())
      .addColumn('holder', 'varchar(64)')
      .execute();
    await db
      .insertInto('event_outbox_state')
      .values([
        // Ids start at this moment in milliseconds: a database made later (a move with tokend export and
        // import, a new in-place install) gives ids above an earlier one's, which gave fewer events than
        // milliseconds went by, so a subscriber that keeps the highest id it saw drops none of the new.
        { name: 'sequence', value: Date.now(), holder: null },
        { name: 'drain', value: 0, holder: null },
      ])
      .execute();
  },
  async down(db: AnyDb) {
    await db.schema.dropTable('event_outbox_state').execute();
    await db.schema.dropTable('event_outbox').execute();
  },
});
