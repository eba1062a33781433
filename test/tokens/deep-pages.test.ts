// Deep pages of GET /v1/tokens skip their offset in the listing index and then read their rows (a deferred
// join, from offset 200 on). Every page is checked against the listing computed here from every row of the
// user, after changes made around the API too (SQL, the service), and as tokens expire.
import { describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { randomBytes } from 'node:crypto';
import { DIALECTS } from '../helpers/dialects.ts';
import { body, sharedHarness, type Harness } from '../helpers/app.ts';
import { TokenPrivilege } from '../../src/auth/privileges.ts';

/**
 * The app's clock (BuildOptions.clock) and the listing computed here read the same second, which stands
 * still until a test moves it: a token expires between two requests without a wait.
 */
let clockSeconds = Math.floor(Date.now() / 1000);
const nowS = () => clockSeconds;

interface Spec {
  private?: boolean;
  expires_at?: number | null;
}

/** Inserts tokens straight into the table (as an operator's SQL or an import would). */
async function insertTokens(h: Harness, userId: number, n: number, spec: (i: number) => Spec = () => ({})) {
  const rows = Array.from({ length: n }, (_, i) => ({
    user_id: userId,
    privileges: 0,
    description: `bulk ${i}`,
    token_hash: randomBytes(32).toString('hex'),
    private: spec(i).private ? 1 : 0,
    last_updated: nowS(),
    expires_at: spec(i).expires_at ?? null,
  }));
  for (let at = 0; at < rows.length; at += 250)
    await h.store.db
      .insertInto('tokens')
      .values(rows.slice(at, at + 250))
      .execute();
}

/** The user's listing computed from all of their rows: public, unexpired at `now`, in id order. */
async function expectedListing(h: Harness, userId: number, now: number) {
  const rows = await h.store.db
    .selectFrom('tokens')
    .select(['id', 'private', 'expires_at'])
    .where('user_id', '=', userId)
    .execute();
  return rows
    .filter((r) => r.private === 0 && (r.expires_at === null || Number(r.expires_at) > now))
    .map((r) => [r.id, r.expires_at === null ? undefined : Number(r.expires_at)] as const)
    .sort((a, b) => a[0] - b[0]);
}

/** The API's page, compared with the listing computed from every row at the same second. */
async function assertPageMatches(h: Harness, secret: string, userId: number, p: number, l: number) {
  const r = await h.api({
    method: 'GET',
    path: `/tokens?p=${p}&l=${l}`,
    headers: { 'x-ripple-token': secret },
  });
  assert.equal(r.statusCode, 200, r.body);
  const got = (body(r).tokens as Array<{ id: number; expires_at?: number }>).map((t) => [t.id, t.expires_at]);
  const expected = (await expectedListing(h, userId, nowS()))
    .slice((p - 1) * l, p * l)
    .map(([id, at]) => [id, at]);
  assert.deepEqual(got, expected, `page ${p} of ${l}`);
  return got.map(([id]) => id);
}

for (const dialect of DIALECTS) {
  describe(`deep listing pages [${dialect}]`, () => {
    const harness = sharedHarness(dialect, {}, { clock: nowS });

    it('every deep page equals the listing of all rows, before and after changes made around the API', async () => {
      const h = harness();
      const user = await h.createUser();
      const past = nowS() - 10;
      const later = nowS() + 3600;
      // 1,300 rows: every 7th private, every 11th already expired, every 13th expiring in an hour
      await insertTokens(h, user.id, 1300, (i) => ({
        private: i % 7 === 0,
        expires_at: i % 11 === 0 ? past : i % 13 === 0 ? later : null,
      }));
      // Write: it also revokes one of the rows by id below.
      const { secret, id: credentialId } = await h.createToken(user.id, {
        description: 'credential',
        privileges: TokenPrivilege.Write,
      });
      const check = async () => {
        for (const [p, l] of [
          [11, 50],
          [12, 50],
          [20, 50],
          [21, 50],
          [22, 50],
          [23, 50],
          [100, 7],
          [900, 1],
          [1000, 1],
        ] as const)
          await assertPageMatches(h, secret, user.id, p, l);
      };
      await check();
      // the last page ends with the credential token, and the page after it is empty
      const last = await assertPageMatches(h, secret, user.id, 1000, 1);
      assert.ok(last.length === 0 || last[0]! <= credentialId);

      const ids = (
        await h.store.db
          .selectFrom('tokens')
          .select('id')
          .where('user_id', '=', user.id)
          .orderBy('id')
          .execute()
      ).map((r) => r.id);
      const changes: Array<[string, () => Promise<unknown>]> = [
        [
          'SQL delete of an early token',
          () => h.store.db.deleteFrom('tokens').where('id', '=', ids[3]!).execute(),
        ],
        ['SQL insert', () => insertTokens(h, user.id, 40)],
        [
          'a token made private by SQL',
          () => h.store.db.updateTable('tokens').set({ private: 1 }).where('id', '=', ids[20]!).execute(),
        ],
        [
          'a token expired by SQL',
          () =>
            h.store.db.updateTable('tokens').set({ expires_at: past }).where('id', '=', ids[30]!).execute(),
        ],
        [
          'revoked through the API',
          async () => {
            const r = await h.api({
              method: 'DELETE',
              path: `/tokens/${ids[40]!}`,
              headers: { 'x-ripple-token': secret },
            });
            assert.equal(r.statusCode, 200, r.body);
          },
        ],
        ['issued through the service', () => h.createToken(user.id)],
      ];
      for (const [what, change] of changes) {
        await change();
        await assertPageMatches(h, secret, user.id, 12, 50).catch((err: unknown) => {
          throw new Error(`after ${what}: ${String(err)}`);
        });
        await check();
      }
    });

    it('a token that expires between two requests leaves the deep pages at once', async () => {
      const h = harness();
      const user = await h.createUser();
      // alive until the clock reaches it (expires_at > now is alive)
      const soon = nowS() + 2;
      await insertTokens(h, user.id, 620, (i) => ({ expires_at: i === 100 ? soon : null }));
      const { secret } = await h.createToken(user.id);
      const first = await assertPageMatches(h, secret, user.id, 11, 50);
      clockSeconds = soon;
      const after = await assertPageMatches(h, secret, user.id, 11, 50);
      assert.equal(after[0], first[1], 'the page moved up by one token');
    });
  });
}
