// Several instances starting at once on one empty database: every one starts, and each migration is
// applied and recorded exactly once (Kysely's Migrator holds a lock while it migrates). In place, several
// `tokend migrate` at once on one family database, then the instances.
import { describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { sql } from 'kysely';
import { DIALECTS } from '../helpers/dialects.ts';
import { createFamilyDatabase, createTestDatabase } from '../helpers/databases.ts';
import { migrateDatabase, openStore } from '../../src/store/database.ts';
import { MIGRATIONS } from '../../src/store/migrations/index.ts';
import { IN_PLACE_MIGRATIONS, IN_PLACE_MIGRATION_TABLE } from '../../src/store/in-place-migrations.ts';

const INSTANCES = 8;

// In-process SQLite connections are synchronous and would only queue on the file lock; the server
// databases are where concurrent start-ups really race.
for (const dialect of DIALECTS.filter((d) => d !== 'sqlite')) {
  describe(`concurrent migrations [${dialect}]`, () => {
    it(
      `${INSTANCES} stores opened at once on a fresh database all succeed`,
      { timeout: 60_000 },
      async (t) => {
        // In place (`ripple`) the family's database is migrated by `tokend migrate` alone: several at once.
        const inPlace = dialect === 'ripple';
        const database = inPlace ? await createFamilyDatabase() : await createTestDatabase(dialect);
        t.after(() => database.drop());
        const config =
          inPlace && database.config.kind === 'mysql'
            ? { ...database.config, schema: 'ripple' as const }
            : database.config;

        const results = await Promise.allSettled(
          Array.from({ length: INSTANCES }, async () => {
            if (inPlace) await migrateDatabase(config, { explicit: true });
            return openStore(config, { poolSize: 2 });
          }),
        );
        const stores = results.flatMap((r) => (r.status === 'fulfilled' ? [r.value] : []));
        t.after(() => Promise.all(stores.map((s) => s.close())));
        const failures = results.flatMap((r) => (r.status === 'rejected' ? [String(r.reason)] : []));
        assert.deepEqual(failures, [], 'every instance starts');
        assert.equal(stores.length, INSTANCES);

        const { db } = stores[0]!;
        const recorded = await sql<{ name: string; n: number | string }>`
        SELECT name, COUNT(*) AS n FROM ${sql.table(inPlace ? IN_PLACE_MIGRATION_TABLE : 'kysely_migration')}
        GROUP BY name ORDER BY name`.execute(db.withoutPlugins());
        assert.deepEqual(
          recorded.rows.map((r) => [r.name, Number(r.n)]),
          (inPlace ? IN_PLACE_MIGRATIONS : MIGRATIONS).map(([name]) => [name, 1]),
        );
        // Every instance can use the schema.
        for (const store of stores) await store.ping();
      },
    );
  });
}
