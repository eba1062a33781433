// The test harness gives a server database a test is done with to the next test of its process, reset
// (test/helpers/recycling.ts): what the next test finds must be what a fresh copy of the template holds,
// and a database whose schema a test changed must never be handed on.
import { describe, it } from 'node:test';
import assert from 'node:assert/strict';
import pg from 'pg';
import { createConnection } from 'mysql2/promise';
import { openHarness } from '../helpers/app.ts';
import { DIALECTS, type Backend } from '../helpers/dialects.ts';

/** Runs one statement on a harness's database as another program would, on a connection of its own: its rows. */
async function execute(backend: Backend, url: string, statement: string): Promise<unknown[]> {
  if (backend === 'postgres') {
    const client = new pg.Client({ connectionString: url });
    await client.connect();
    try {
      return (await client.query(statement)).rows;
    } finally {
      await client.end();
    }
  }
  const connection = await createConnection({ uri: url });
  try {
    const [rows] = await connection.query(statement);
    return Array.isArray(rows) ? rows : [];
  } finally {
    await connection.end();
  }
}

/** The migrations recorded as applied, by name, in order. */
const migrationsOf = async (backend: Backend, url: string) =>
  (
    await execute(
      backend,
      url,
      `SELECT name FROM ${backend === 'ripple' ? 'tokend_migration' : 'kysely_migration'} ORDER BY name`,
    )
  ).map((row) => (row as { name: string }).name);

for (const backend of DIALECTS.filter((b) => b !== 'sqlite'))
  describe(`a test's database given to the next test [${backend}]`, () => {
    it('comes back as fresh: no row of the test before, the template rows kept, ids from the start', async () => {
      const first = await openHarness(backend);
      const url = first.harness.database.url;
      const migrations = await migrationsOf(backend, url);
      assert.ok(migrations.length > 0, 'a copy of the migrated template');
      const user = await first.harness.createUser();
      const token = await first.harness.createToken(user.id);
      await first.close();

      const second = await openHarness(backend);
      try {
        assert.equal(second.harness.database.url, url, 'the database was handed on');
        const users = await second.harness.store.db.selectFrom('users').select('id').execute();
        const tokens = await second.harness.store.db.selectFrom('tokens').select('id').execute();
        assert.deepEqual([users, tokens], [[], []]);
        const again = await second.harness.createUser();
        assert.equal(again.id, user.id, 'the users id counter starts where a fresh copy starts');
        assert.equal((await second.harness.createToken(again.id)).id, token.id);
        assert.deepEqual(await migrationsOf(backend, url), migrations, 'the migrations recorded as before');
      } finally {
        await second.close();
      }
    });

    it('is not handed on once its schema changed', async () => {
      const first = await openHarness(backend);
      const url = first.harness.database.url;
      await execute(backend, url, 'ALTER TABLE users ADD COLUMN left_by_a_test INTEGER');
      await first.close();
      const second = await openHarness(backend);
      try {
        assert.notEqual(second.harness.database.url, url);
        const columns = await second.harness.store.db.introspection.getTables();
        const users = columns.find((table) => table.name === 'users' && !table.isView);
        assert.ok(users, 'a users table');
        assert.ok(!users.columns.some((column) => column.name === 'left_by_a_test'));
      } finally {
        await second.close();
      }
    });
  });
