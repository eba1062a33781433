// Migration 0016: every OAuth client gets the key its name compares by; of one owner's clients that
// share a name (case, width or spaces aside) the oldest keeps it and the others are renamed "Name (2)"…;
// then a unique index holds the rule on every backend, whatever its collation.
import { describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { DIALECTS } from '../helpers/dialects.ts';
import { build, migrationTarget, type Harness } from '../helpers/app.ts';
import { MIGRATIONS } from '../../src/store/migrations/index.ts';
import { clientNameKey } from '../../src/oauth/clients.ts';
import { insertClient } from '../../src/oauth/repository.ts';

const migration = (name: string) => MIGRATIONS.find(([n]) => n === name)![1];

/** A client row as one stood before migration 0016: no name key. */
const oldClient = (h: Harness, id: string, ownerId: number, name: string, createdAt: number) =>
  insertClient(h.store.db, {
    id,
    name,
    owner_id: ownerId,
    avatar: '',
    redirect_uris: '["https://app.example/cb"]',
    secret_hash: null,
    created_at: createdAt,
  });

for (const dialect of DIALECTS) {
  describe(`migration 0016_oauth_client_owners [${dialect}]`, () => {
    it("keys every name, renames one owner's later duplicates, and then refuses a duplicate key", async (t) => {
      const h = await build(t, dialect);
      const owner = await h.createUser();
      const other = await h.createUser();
      const target = migrationTarget(h);
      const up = migration('0016_oauth_client_owners')(target.dialect);
      await up.down!(target.db);
      await oldClient(h, 'c-oldest', owner.id, 'Score Tracker', 100);
      await oldClient(h, 'c-later', owner.id, 'score tracker', 200);
      await oldClient(h, 'c-latest', owner.id, 'ＳＣＯＲＥ ＴＲＡＣＫＥＲ', 300);
      // "Score Tracker (2)" is taken already: the next duplicate moves on to (3).
      await oldClient(h, 'c-taken', owner.id, 'Score Tracker (2)', 50);
      await oldClient(h, 'c-long', owner.id, 'L'.repeat(255), 100);
      await oldClient(h, 'c-long-dup', owner.id, 'l'.repeat(255), 200);
      await oldClient(h, 'c-other', other.id, 'Score Tracker', 400);
      await up.up(target.db);

      const rows = await h.store.db.selectFrom('oauth_clients').select(['id', 'name', 'name_key']).execute();
      const names = Object.fromEntries(rows.map((r) => [r.id, r.name]));
      assert.deepEqual(names, {
        'c-oldest': 'Score Tracker',
        'c-taken': 'Score Tracker (2)',
        'c-later': 'score tracker (3)',
        'c-latest': 'ＳＣＯＲＥ ＴＲＡＣＫＥＲ (4)',
        'c-long': 'L'.repeat(255),
        'c-long-dup': `${'l'.repeat(251)} (2)`,
        'c-other': 'Score Tracker',
      });
      // The migration's key is the one the application computes.
      for (const r of rows) assert.equal(r.name_key, clientNameKey(r.name), r.id);

      await assert.rejects(
        insertClient(h.store.db, {
          id: 'c-dup',
          name: 'SCORE tracker',
          name_key: clientNameKey('SCORE tracker'),
          owner_id: owner.id,
          avatar: '',
          redirect_uris: '[]',
          secret_hash: null,
          created_at: 500,
        }),
      );
    });
  });
}
