// Deep pages of GET /v1/tokens come from a snapshot of the owner's token ids (src/tokens/listing-snapshots.ts),
// valid for one users.tokens_version, which database triggers move on every change to the listed set.
// Every page is checked against the plain LIMIT/OFFSET query, after changes made around the API too.
import { describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { randomBytes } from 'node:crypto';
import { DIALECTS } from '../helpers/dialects.ts';
import { sharedHarness } from '../http/shared-harness.ts';
import { body, type Harness } from '../helpers/app.ts';
import { listPublicTokens } from '../../src/tokens/repository.ts';

const nowS = () => Math.floor(Date.now() / 1000);

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

const versionOf = async (h: Harness, userId: number): Promise<number> =>
  Number(
    (
      await h.store.db
        .selectFrom('users')
        .select('tokens_version')
        .where('id', '=', userId)
        .executeTakeFirstOrThrow()
    ).tokens_version,
  );

async function deepPageCounts(h: Harness): Promise<{ hit: number; miss: number }> {
  const text = (await h.app.inject({ method: 'GET', url: '/metrics' })).body;
  const count = (label: string) =>
    Number(
      new RegExp(`^tokend_listing_deep_pages_total\\{snapshot="${label}"\\} (\\d+)`, 'm').exec(text)?.[1] ??
        0,
    );
  return { hit: count('hit'), miss: count('miss') };
}

/** The API's page, compared with the plain OFFSET query run at the same second. */
async function assertPageMatches(h: Harness, secret: string, userId: number, p: number, l: number) {
  const r = await h.api({
    method: 'GET',
    path: `/tokens?p=${p}&l=${l}`,
    headers: { 'x-ripple-token': secret },
  });
  assert.equal(r.statusCode, 200, r.body);
  const got = (body(r).tokens as Array<{ id: number; expires_at?: number }>).map((t) => [t.id, t.expires_at]);
  const expected = (await listPublicTokens(h.store.db, userId, l, (p - 1) * l, nowS())).map((t) => [
    t.id,
    t.expires_at,
  ]);
  assert.deepEqual(got, expected, `page ${p} of ${l}`);
  return got.map(([id]) => id);
}

for (const dialect of DIALECTS) {
  describe(`deep listing pages [${dialect}]`, () => {
    const harness = sharedHarness(dialect);

    it('tokens_version moves with every insert, delete and change of visibility or expiry, and only then', async () => {
      const h = harness();
      const user = await h.createUser();
      const other = await h.createUser();
      let v = await versionOf(h, user.id);
      const step = async (what: string, change: () => Promise<unknown>, moves: boolean) => {
        await change();
        const now = await versionOf(h, user.id);
        if (moves) assert.ok(now > v, `${what}: ${v} → ${now}`);
        else assert.equal(now, v, `${what}: ${v} → ${now}`);
        v = now;
      };
      const tokens = () => h.store.db.updateTable('tokens').where('user_id', '=', user.id);
      await step('issue through the service', () => h.createToken(user.id), true);
      await step('insert three rows', () => insertTokens(h, user.id, 3), true);
      await step('another user gets a token', () => h.createToken(other.id), false);
      await step(
        'last_updated',
        () =>
          tokens()
            .set({ last_updated: nowS() + 5 })
            .execute(),
        false,
      );
      await step('privileges', () => tokens().set({ privileges: 2 }).execute(), false);
      await step('private', () => tokens().set({ private: 1 }).execute(), true);
      await step(
        'expires_at',
        () =>
          tokens()
            .set({ expires_at: nowS() + 60 })
            .execute(),
        true,
      );
      const one = await h.store.db
        .selectFrom('tokens')
        .select('id')
        .where('user_id', '=', user.id)
        .executeTakeFirstOrThrow();
      const otherVersion = await versionOf(h, other.id);
      await step(
        'moved to another user',
        () => h.store.db.updateTable('tokens').set({ user_id: other.id }).where('id', '=', one.id).execute(),
        true,
      );
      assert.ok((await versionOf(h, other.id)) > otherVersion, 'the receiving user moves too');
      await step(
        'delete',
        () => h.store.db.deleteFrom('tokens').where('user_id', '=', user.id).execute(),
        true,
      );
    });

    it('every deep page equals the OFFSET answer, before and after changes made around the API', async () => {
      const h = harness();
      const user = await h.createUser();
      const past = nowS() - 10;
      const later = nowS() + 3600;
      // 1,300 rows: every 7th private, every 11th already expired, every 13th expiring in an hour
      await insertTokens(h, user.id, 1300, (i) => ({
        private: i % 7 === 0,
        expires_at: i % 11 === 0 ? past : i % 13 === 0 ? later : null,
      }));
      const { secret, id: credentialId } = await h.createToken(user.id, { description: 'credential' });
      const before = await deepPageCounts(h);
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
      const counted = await deepPageCounts(h);
      assert.equal(counted.miss - before.miss, 1, 'one snapshot read for the first deep page');
      assert.ok(
        counted.hit - before.hit >= 8,
        `the other deep pages from the held snapshot: ${JSON.stringify(counted)}`,
      );
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
          () =>
            h.api({ method: 'DELETE', path: `/tokens/${ids[40]!}`, headers: { 'x-ripple-token': secret } }),
        ],
        ['issued through the service', () => h.createToken(user.id)],
      ];
      for (const [what, change] of changes) {
        const missesBefore = (await deepPageCounts(h)).miss;
        await change();
        await assertPageMatches(h, secret, user.id, 12, 50).catch((err: unknown) => {
          throw new Error(`after ${what}: ${String(err)}`);
        });
        assert.equal((await deepPageCounts(h)).miss, missesBefore + 1, `${what}: the snapshot is read again`);
        await check();
      }
    });

    it('a token that expires between two requests leaves the deep pages at once', async () => {
      const h = harness();
      const user = await h.createUser();
      // alive for at least a whole second after this line (expires_at > now is alive)
      const soon = nowS() + 2;
      await insertTokens(h, user.id, 620, (i) => ({ expires_at: i === 100 ? soon : null }));
      const { secret } = await h.createToken(user.id);
      const first = await assertPageMatches(h, secret, user.id, 11, 50);
      while (nowS() < soon) await new Promise((resolve) => setTimeout(resolve, 100));
      const misses = (await deepPageCounts(h)).miss;
      const after = await assertPageMatches(h, secret, user.id, 11, 50);
      assert.equal((await deepPageCounts(h)).miss, misses, 'no write happened: the held snapshot served it');
      assert.equal(after[0], first[1], 'the page moved up by one token');
    });
  });
}
