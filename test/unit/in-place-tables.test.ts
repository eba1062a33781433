// The in-place layout's plugin (src/store/ripple.ts), pure: which names every query gets on a
// Ripple-family database, that ids compared with a user_id column go as text (the family's tokens.user is
// text), and that the docs show exactly the SQL tokend migrate runs on the family's tables.
import { describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { readFileSync } from 'node:fs';
import { sql, type Kysely } from 'kysely';
import type { Database } from '../../src/store/schema.ts';
import { MIGRATIONS } from '../../src/store/migrations/index.ts';
import {
  FAMILY_FORM_CHARSETS,
  OWN_TABLE_CHARSET,
  OWN_TABLE_COLLATION,
  inPlaceMigrationTables,
  inPlaceTables,
} from '../../src/store/ripple.ts';
import {
  COVERED_BY_FAMILY_CHANGES,
  OWN_TABLE_MIGRATIONS,
  FAMILY_CHANGES,
  FAMILY_CHANGES_UNDONE,
  IN_PLACE_MIGRATIONS,
} from '../../src/store/in-place-migrations.ts';
import { migrationStatements, recordingKysely } from '../../src/store/dry-run.ts';

const db: Kysely<Database> = recordingKysely('mysql', [inPlaceTables()]);

describe('the in-place tables', () => {
  it("names tokend's tables with the prefix, qualified references and raw table references too", () => {
    const q = db
      .selectFrom('tokens')
      .innerJoin('users', 'users.id', 'tokens.user_id')
      .select(['tokens.id', 'users.username'])
      .where(sql<boolean>`${sql.ref('tokens.privileges')} > 0`)
      .where('tokens.id', 'in', db.selectFrom('token_reveals').select('token_id'))
      .compile();
    assert.equal(
      q.sql,
      'select `tokend_tokens`.`id`, `tokend_users`.`username` from `tokend_tokens` inner join `tokend_users` on ' +
        '`tokend_users`.`id` = `tokend_tokens`.`user_id` where `tokend_tokens`.`privileges` > 0 and ' +
        '`tokend_tokens`.`id` in (select `token_id` from `tokend_token_reveals`)',
    );
    assert.match(
      db.deleteFrom('oauth_codes').where('used', '=', 1).compile().sql,
      /^delete from `tokend_oauth_codes`/,
    );
    assert.match(db.updateTable('users').set({ privileges: 0 }).compile().sql, /^update `tokend_users`/);
  });

  it("sends an id compared with the family's user_id as text, alone or in a list, and leaves every other value alone", () => {
    const q = db
      .selectFrom('tokens')
      .select('id')
      .where('user_id', '=', 5)
      .where('tokens.user_id', 'in', [6, 7])
      .where('id', '=', 8)
      .where('private', '=', 0)
      .compile();
    assert.deepEqual(q.parameters, ['5', '6', '7', 8, 0]);
    const insert = db
      .insertInto('oauth_consents')
      .values({ user_id: 5, client_id: 'c', scope: 's', updated_at: 9 })
      .compile();
    assert.deepEqual(insert.parameters, [5, 'c', 's', 9]);
  });

  it("rewrites only the columns of the family's tables: tokend's own user_id stays an integer", () => {
    // a table of tokend's own alone, qualified or not
    assert.deepEqual(
      db
        .selectFrom('oauth_access_tokens')
        .select('id')
        .where('user_id', '=', 5)
        .where('oauth_access_tokens.user_id', 'in', [6, 7])
        .compile().parameters,
      [5, 6, 7],
    );
    assert.deepEqual(db.deleteFrom('oauth_consents').where('user_id', '=', 5).compile().parameters, [5]);
    assert.deepEqual(
      db.updateTable('security_log').set({ user_id: 1 }).where('user_id', '=', 5).compile().parameters,
      [1, 5],
    );
    // joined with the family's tables: each column by its table, aliases too
    const joined = db
      .selectFrom('oauth_access_tokens as a')
      .innerJoin('tokens as t', 't.id', 'a.id')
      .select('a.id')
      .where('a.user_id', '=', 5)
      .where('t.user_id', '=', 6)
      .compile();
    assert.deepEqual(joined.parameters, [5, '6']);
    // a subquery reads its own tables first
    const nested = db
      .selectFrom('tokens')
      .select('id')
      .where('user_id', '=', 1)
      .where('id', 'in', db.selectFrom('token_reveals').select('token_id').where('session_id', '=', 2))
      .where('user_id', 'in', db.selectFrom('oauth_consents').select('user_id').where('user_id', '=', 3))
      .compile();
    assert.deepEqual(nested.parameters, ['1', 2, 3]);
    // an UPDATE of the family's tokens compares as text, and tests the plain id first
    const update = db.updateTable('tokens').set({ privileges: 1 }).where('user_id', '=', 7).compile();
    assert.deepEqual(update.parameters, [1, '7']);
    assert.match(update.sql, /where user_id <> '' AND .* and `user_id` = \?$/);
  });

  it("never sends a text the family's latin1 columns cannot hold: NULL where it is looked for, true where it is not", () => {
    const byName = (name: string) =>
      db.selectFrom('users').select('id').where('username_safe', '=', name).compile();
    assert.deepEqual(byName('zoë').parameters, ['zoë']);
    assert.deepEqual(byName('€uro').parameters, ['€uro']);
    for (const name of ['アリス', 'Ελένη', '😀', 'x\u0100', 'lone\ud800'])
      assert.deepEqual(byName(name).parameters, [null], name);
    // the statement is the same: one place for the value, the same index
    assert.equal(byName('アリス').sql, byName('alice').sql);
    const list = db
      .selectFrom('tokens')
      .select('id')
      .where('description', 'in', ['a', '日本', 'b'])
      .where('tokens.token_hash', 'not in', ['c', '日本'])
      .compile();
    assert.deepEqual(list.parameters, ['a', null, 'b', 'c']);
    const differs = db.selectFrom('users').select('id').where('username', '<>', '日本').compile();
    assert.match(differs.sql, /where \? = \?$/);
    assert.deepEqual(differs.parameters, [1, 1]);
    // tokend's own tables are utf8mb4: their text goes as it is
    assert.deepEqual(
      db.selectFrom('oauth_clients').select('id').where('id', '=', 'アプリ').compile().parameters,
      ['アプリ'],
    );
    assert.deepEqual(
      db
        .selectFrom('security_log')
        .innerJoin('users', 'users.id', 'security_log.user_id')
        .select('security_log.id')
        .where('detail', '=', '3 → 0')
        .where('users.username', '=', 'アリス')
        .compile().parameters,
      ['3 → 0', null],
    );
  });

  it("takes what the family database's columns hold: a utf8mb4 column takes any text", () => {
    const converted = recordingKysely('mysql', [
      inPlaceTables(new Map([...FAMILY_FORM_CHARSETS, ['users.username_safe', 'utf8mb4']])),
    ]) as Kysely<Database>;
    const q = converted
      .selectFrom('users')
      .select('id')
      .where('username_safe', '=', 'アリス')
      .where('username', '=', 'アリス')
      .compile();
    assert.deepEqual(q.parameters, ['アリス', null]);
  });

  it("leaves out a migration's foreign keys to the family's tables, keeping those between tokend's own", async () => {
    const oauth = IN_PLACE_MIGRATIONS.find(([name]) => name === '0002_oauth')![1]('mysql');
    const statements = await migrationStatements('mysql', oauth, [inPlaceMigrationTables()]);
    const codes = statements.find((s) => s.startsWith('create table `tokend_oauth_codes`'))!;
    assert.ok(codes, statements.join('\n'));
    assert.match(
      codes,
      /`client_id` varchar\(64\) not null references `tokend_oauth_clients` \(`id`\) on delete cascade/,
    );
    assert.doesNotMatch(codes, /references `(users|tokens|tokend_users|tokend_tokens)`/);
  });

  it("decides for every one of tokend's migrations whether it runs in place or FAMILY_CHANGES covers it", () => {
    for (const [name] of MIGRATIONS)
      assert.ok(
        OWN_TABLE_MIGRATIONS.has(name) !== COVERED_BY_FAMILY_CHANGES.has(name),
        `${name}: put it in OWN_TABLE_MIGRATIONS (it makes or changes tables of tokend's own only) or, with the change it needs on the family's tables, in COVERED_BY_FAMILY_CHANGES (src/store/ripple.ts)`,
      );
    assert.deepEqual(
      IN_PLACE_MIGRATIONS.map(([name]) => name),
      [
        '0000_ripple_in_place',
        ...MIGRATIONS.map(([name]) => name).filter((n) => OWN_TABLE_MIGRATIONS.has(n)),
        '0019_in_place_utf8mb4',
      ].sort(),
      'in the order the migrator applies them: by name',
    );
  });

  it('makes every table of its own in utf8mb4, whatever the database default, and says so in --dry-run', async () => {
    for (const [name, make] of IN_PLACE_MIGRATIONS.slice(1)) {
      const statements = await migrationStatements('mysql', make('mysql'), [inPlaceMigrationTables()]);
      for (const create of statements.filter((s) => s.startsWith('create table')))
        assert.ok(
          create.endsWith(` DEFAULT CHARSET=${OWN_TABLE_CHARSET} COLLATE=${OWN_TABLE_COLLATION}`),
          `${name}: ${create}`,
        );
    }
  });

  it('shows in docs/compatibility.md exactly the SQL that tokend migrate runs and that undoes it', () => {
    const docs = readFileSync(new URL('../../docs/compatibility.md', import.meta.url), 'utf8');
    for (const statement of [...FAMILY_CHANGES, ...FAMILY_CHANGES_UNDONE])
      assert.ok(docs.includes(`${statement};`), statement);
  });
});
