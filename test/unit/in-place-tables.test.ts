// The in-place layout's plugin (src/store/ripple.ts), pure: which names every query gets on a
// Ripple-family database, that ids compared with a user_id column go as text (the family's tokens.user is
// text), and that the docs show exactly the SQL tokend migrate runs on the family's tables.
import { describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { readFileSync } from 'node:fs';
import { sql, type Kysely } from 'kysely';
import type { Database } from '../../src/store/schema.ts';
import { MIGRATIONS } from '../../src/store/migrations.ts';
import {
  COVERED_BY_FAMILY_CHANGES,
  OWN_TABLE_MIGRATIONS,
  FAMILY_CHANGES,
  FAMILY_CHANGES_UNDONE,
  IN_PLACE_MIGRATIONS,
  inPlaceMigrationTables,
  inPlaceTables,
} from '../../src/store/ripple.ts';
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

  it('sends an id compared with user_id as text, alone or in a list, and leaves every other value alone', () => {
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
      ],
    );
  });

  it('shows in docs/compatibility.md exactly the SQL that tokend migrate runs and that undoes it', () => {
    const docs = readFileSync(new URL('../../docs/compatibility.md', import.meta.url), 'utf8');
    for (const statement of [...FAMILY_CHANGES, ...FAMILY_CHANGES_UNDONE])
      assert.ok(docs.includes(`${statement};`), statement);
  });
});
