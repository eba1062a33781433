// Usernames compare in Unicode NFKC, case-folded, spaces as underscores, on every backend; new usernames
// with invisible characters are refused; a name that folds to a taken one is taken.
import { describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { DIALECTS } from '../helpers/dialects.ts';
import { build, body } from '../helpers/app.ts';
import { cliHarness } from '../helpers/cli.ts';
import type { RowDataPacket } from 'mysql2/promise';
import { MIGRATIONS } from '../../src/store/migrations/index.ts';
import { IN_PLACE_MIGRATIONS } from '../../src/store/in-place-migrations.ts';

for (const dialect of DIALECTS.filter((d) => d !== 'ripple')) {
  describe(`usernames [${dialect}]`, () => {
    it('a login finds the user under any NFKC / case / space spelling of the name', async (t) => {
      const h = await build(t, dialect);
      const user = await h.createUser({ username: 'Cool Straße' });
      for (const spelling of ['cool_strasse', 'ＣＯＯＬ　ＳＴＲＡＳＳＥ', 'COOL STRASSE', 'cool straße']) {
        const r = await h.api({
          method: 'POST',
          path: '/tokens',
          payload: { username: spelling, password: user.password },
        });
        assert.equal(r.statusCode, 200, `${spelling}: ${r.body}`);
        assert.equal(body(r).id, user.id);
      }
    });

    it('migration 0009 refolds stored keys, leaving a key another user holds alone', async (t) => {
      const h = await build(t, dialect);
      const b = await h.createUser({ username: 'Full Width' });
      const a = await h.createUser({ username: 'tmp_a' });
      // As a row stood before: a fullwidth name under a key that was lower-cased only.
      await h.store.db
        .updateTable('users')
        .set({ username: 'Ｆｕｌｌ Ｗｉｄｔｈ', username_safe: 'ｆｕｌｌ_ｗｉｄｔｈ' })
        .where('id', '=', a.id)
        .execute();
      const c = await h.createUser({ username: 'Ärger' });
      await h.store.db
        .updateTable('users')
        .set({ username_safe: 'ärger_old' })
        .where('id', '=', c.id)
        .execute();
      const factory = MIGRATIONS.find(([name]) => name === '0009_folded_usernames')![1];
      await factory(dialect).up(h.store.db);
      const keys = Object.fromEntries(
        (await h.store.db.selectFrom('users').select(['id', 'username_safe']).execute()).map((r) => [
          r.id,
          r.username_safe,
        ]),
      );
      assert.equal(keys[c.id], 'ärger');
      assert.equal(keys[a.id], 'ｆｕｌｌ_ｗｉｄｔｈ', 'the folded key is taken: left alone');
      assert.equal(keys[b.id], 'full_width');
    });
  });
}

// In place the names are the family's: its website stores `username_safe` as the name lower-cased with
// spaces as underscores (hanayo's safeUsername), in its latin1 column, and tokend compares its own fold
// of a typed name with that, under the column's collation (latin1_swedish_ci).
if (DIALECTS.includes('ripple'))
  describe('usernames [ripple]', () => {
    it("a login finds the user under the spellings whose fold is the family's username_safe", async (t) => {
      const h = await build(t, 'ripple');
      const user = await h.createUser({ username: 'Cool Name' });
      for (const spelling of ['cool_name', 'ＣＯＯＬ　ＮＡＭＥ', 'COOL NAME', ' Cool Name ']) {
        const r = await h.api({
          method: 'POST',
          path: '/tokens',
          payload: { username: spelling, password: user.password },
        });
        assert.equal(r.statusCode, 200, `${spelling}: ${r.body}`);
        assert.equal(body(r).id, user.id);
      }
      // The family's key of "Cool Straße" keeps its ß (lower case alone); tokend's fold of any spelling
      // has "ss", which latin1_swedish_ci does not take for ß: such a user signs in by id.
      const strasse = await h.createUser({ username: 'Cool Straße' });
      for (const spelling of ['cool_strasse', 'COOL STRASSE', 'cool straße']) {
        const r = await h.api({
          method: 'POST',
          path: '/tokens',
          payload: { username: spelling, password: strasse.password },
        });
        assert.equal(r.statusCode, 404, `${spelling}: ${r.body}`);
      }
      const byId = await h.api({
        method: 'POST',
        path: '/tokens',
        payload: { id: strasse.id, password: strasse.password },
      });
      assert.equal(byId.statusCode, 200, byId.body);
    });

    it("runs no username migration: the family's username_safe is its own", async (t) => {
      const h = await build(t, 'ripple');
      const user = await h.createUser({ username: 'Full Width' });
      assert.ok(!IN_PLACE_MIGRATIONS.some(([name]) => name === '0009_folded_usernames'));
      const [[row]] = await h.family!.query<RowDataPacket[]>('SELECT username_safe FROM users WHERE id = ?', [
        user.id,
      ]);
      assert.equal(row!.username_safe, 'full_width');
    });
  });

describe('tokend user create and usernames', () => {
  it('refuses invisible characters, and a name that folds to a taken one', async (t) => {
    const h = await cliHarness(t);
    await h.json(['user', 'create', '--username', 'alice', '--password', 'p']);
    for (const name of ['ａｌｉｃｅ', 'ALICE', 'Alice ']) {
      const r = await h.cli(['user', 'create', '--username', name, '--password', 'p']);
      assert.equal(r.code, 1, name);
      assert.match(r.stderr, /already exists/, name);
    }
    for (const name of [
      'ali\u200bce',
      'bob\u202e',
      'tab\there',
      // Invisible marks: variation selectors, the combining grapheme joiner, a Khmer invisible vowel, a
      // Mongolian free variation selector, a variation selector of the supplement.
      'alice\ufe0f',
      'alice\u034f',
      'alice\u17b4',
      'alice\u180b',
      'bob\u{e0100}',
    ]) {
      const r = await h.cli(['user', 'create', '--username', name, '--password', 'p']);
      assert.equal(r.code, 2, `${JSON.stringify(name)}: a usage mistake`);
      assert.match(r.stderr, /control, format or invisible characters/);
    }
    const ok = await h.json(['user', 'create', '--username', 'Ünïcode Ｎａｍｅ', '--password', 'p']);
    assert.equal(ok.username, 'Ünïcode Ｎａｍｅ');
    const { users } = (await h.json(['user', 'list'])) as unknown as { users: Array<{ username: string }> };
    assert.deepEqual(
      users.map((u) => u.username).sort(),
      ['alice', 'Ünïcode Ｎａｍｅ'].sort(),
      'no refused name was created',
    );
  });

  it('refuses a name holding U+FFFD, the mark of bytes that were not UTF-8', async (t) => {
    const h = await cliHarness(t);
    const r = await h.cli(['user', 'create', '--username', '\ufffd\ufffdlol', '--password', 'p']);
    assert.equal(r.code, 2, 'a usage mistake');
    assert.match(r.stderr, /--username: .*U\+FFFD, the replacement character.*not valid UTF-8/);
  });

  it('refuses a name mixing the letters of two scripts, once in NFKC; one script, or CJK, is fine', async (t) => {
    const h = await cliHarness(t);
    await h.json(['user', 'create', '--username', 'alice', '--password', 'p']);
    for (const [name, scripts] of [
      ['\u0430lice', 'Cyrillic and Latin'], // Cyrillic "а"
      ['ＰΑＹ', 'Latin and Greek'], // fullwidth Latin around a Greek capital alpha
      ['\u{1d41a}dmin\u0456', 'Latin and Cyrillic'], // mathematical bold "a" (Latin in NFKC), Cyrillic "і"
      ['\u03bf\u043e', 'Greek and Cyrillic'], // Greek and Cyrillic "o"
      ['\ua4eelice', 'Lisu and Latin'], // Lisu "ꓮ"
      ['\u13aalice', 'Cherokee and Latin'], // Cherokee "Ꭺ"
      ['\u4e28x', 'Han and Latin'], // a Han stroke like "l": Han goes only with kana, Hangul, Bopomofo
      ['\u0430l\u03b9ce', 'Cyrillic, Latin, and Greek'],
    ]) {
      const r = await h.cli(['user', 'create', '--username', name!, '--password', 'p']);
      assert.equal(r.code, 2, `${name}: a usage mistake`);
      assert.match(r.stderr, new RegExp(`--username: a username may not mix ${scripts} letters`), name);
    }
    for (const name of [
      'Алиса',
      'Σωκράτης',
      'Straße 42',
      'Zoë_99',
      '山田たろう',
      '김민준',
      'ヤマダ',
      '王ㄅㄆ',
    ]) {
      const r = await h.cli(['user', 'create', '--username', name, '--password', 'p']);
      assert.equal(r.code, 0, `${name}: ${r.stderr}`);
    }
    // Longer than a username may be once normalised: refused with a reason, not a database error.
    const long = await h.cli(['user', 'create', '--username', '\ufdfa'.repeat(16), '--password', 'p']);
    assert.equal(long.code, 2, 'a usage mistake');
    assert.match(long.stderr, /longer than 255 characters once normalised/);
  });
});
