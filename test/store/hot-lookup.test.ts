// The credential lookup (credentialLookup over Store.hotQuery): one query shared by the lookups started in
// one turn of the event loop; on a SQLite file a read on a query-only connection of the store's own,
// elsewhere a server-side prepared statement. On every dialect it sees committed tokens only, and it
// never waits for a transaction open on the store's main connection.
import { actOutsideRequest } from '../../src/auth/security-log.ts';
import { describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { DIALECTS } from '../helpers/dialects.ts';
import { build } from '../helpers/app.ts';
import { mintToken } from '../../src/auth/mint.ts';
import { bearerTokens } from '../../src/oauth/bearer.ts';
import { issueAccessToken } from '../../src/oauth/issue.ts';
import { registerClient } from '../helpers/oauth.ts';
import { nowSeconds } from '../../src/auth/clock.ts';
import { LOOKUP_BATCH_MAX, credentialLookup } from '../../src/auth/credential-lookup.ts';
import { sql } from 'kysely';
import { openStore, type Store } from '../../src/store/database.ts';
import { familyTokenHash, hashTokenSecret, legacyTokenHash } from '../../src/auth/secret.ts';

const tokenLookup = (store: Pick<Store, 'db' | 'hotQuery' | 'layout'>) =>
  credentialLookup(store, nowSeconds, bearerTokens).token;

/** The store's lookups, counting the queries they run (`queries()`). */
function countingQueries(store: Pick<Store, 'db' | 'hotQuery' | 'layout'>) {
  let ran = 0;
  const counting: Pick<Store, 'db' | 'hotQuery' | 'layout'> = {
    db: store.db,
    layout: store.layout,
    hotQuery<Row>(sqlText: string) {
      const read = store.hotQuery<Row>(sqlText);
      return (parameters: readonly unknown[]) => {
        ran++;
        return read(parameters);
      };
    },
  };
  return { counting, queries: () => ran };
}

for (const dialect of DIALECTS) {
  describe(`credential lookup [${dialect}]`, () => {
    it('does not see a token inserted by a transaction until it commits', async (t) => {
      const h = await build(t, dialect);
      const user = await h.createUser();
      const self = (secret: string) =>
        h.app.inject({ method: 'GET', url: '/api/v1/tokens/self', headers: { 'x-ripple-token': secret } });

      const secret = await h.store.db.transaction().execute(async (trx) => {
        const issued = await mintToken(trx, {
          layout: h.store.layout,
          userId: user.id,
          cap: 'none',
          requested: 0,
          description: 'pending',
          private: false,
          now: nowSeconds(),
          act: actOutsideRequest('cli', nowSeconds()),
        });
        // Inside the transaction, the token exists for the transaction only.
        const during = await self(issued.secret);
        assert.equal(during.statusCode, 404, during.body);
        return issued.secret;
      });
      const after = await self(secret);
      assert.equal(after.statusCode, 200, after.body);
      assert.equal((after.json() as { description: string }).description, 'pending');
    });

    it('finds a live token and nothing for an unknown secret', async (t) => {
      const h = await build(t, dialect);
      const user = await h.createUser();
      const { secret, id } = await h.createToken(user.id, { description: 'found' });
      const lookup = tokenLookup(h.store);
      assert.equal((await lookup(secret))?.id, id);
      assert.equal(await lookup(`${secret}x`), undefined);
    });

    // In place (`ripple`) the MD5 form looked for is the family's own (the hex alone), and it stays: the
    // family's programs find their tokens by it.
    const inPlace = dialect === 'ripple';
    it(
      inPlace
        ? "finds a token stored in the family's MD5 form, in one query, and leaves the form as it is"
        : 'finds a token stored as a legacy MD5 hash and stores its SHA-256 hash instead, in one query',
      async (t) => {
        const h = await build(t, dialect);
        const user = await h.createUser();
        const imported = await h.createToken(user.id, { description: 'imported' });
        const other = await h.createToken(user.id, { description: 'other' });
        const md5Form = inPlace ? familyTokenHash(imported.secret) : legacyTokenHash(imported.secret);
        await h.store.db
          .updateTable('tokens')
          .set({ token_hash: md5Form })
          .where('id', '=', imported.id)
          .execute();
        let queries = 0;
        const lookup = tokenLookup({
          ...h.store,
          hotQuery<Row>(sqlText: string) {
            const read = h.store.hotQuery<Row>(sqlText);
            return (parameters: readonly unknown[]) => {
              queries++;
              return read(parameters);
            };
          },
        });
        const stored = async () =>
          (
            await h.store.db
              .selectFrom('tokens')
              .select('token_hash')
              .where('id', '=', imported.id)
              .executeTakeFirstOrThrow()
          ).token_hash.trimEnd();
        const found = await Promise.all(
          [imported.secret, other.secret, imported.secret].map((s) => lookup(s)),
        );
        assert.deepEqual(
          found.map((row) => row?.description),
          ['imported', 'other', 'imported'],
        );
        assert.equal(queries, 1);
        assert.equal(await stored(), inPlace ? md5Form : hashTokenSecret(imported.secret));
        // Found by its secret from now on; the MD5 form of a secret is no secret that matches.
        assert.equal((await lookup(imported.secret))?.id, imported.id);
        assert.equal(await lookup(md5Form), undefined);
      },
    );

    it('shares one query among the lookups started together, each getting its own answer', async (t) => {
      const h = await build(t, dialect);
      const user = await h.createUser();
      const tokens = await Promise.all(
        [0, 1, 2].map((i) => h.createToken(user.id, { description: `t${i}` })),
      );
      const expired = await h.createToken(user.id, { description: 'expired' });
      await h.store.db.updateTable('tokens').set({ expires_at: 1000 }).where('id', '=', expired.id).execute();
      const { counting, queries } = countingQueries(h.store);
      const lookup = tokenLookup(counting);
      const find = (secret: string) => lookup(secret);

      // Three tokens (one asked for twice), an unknown secret and an expired token: one query.
      const asked = [tokens[0]!, tokens[1]!, tokens[2]!, tokens[1]!].map((tk) => tk.secret);
      const found = await Promise.all([...asked, 'no-such-secret', expired.secret].map(find));
      assert.equal(queries(), 1);
      assert.deepEqual(
        found.map((row) => row?.description),
        ['t0', 't1', 't2', 't1', undefined, undefined],
      );
      assert.equal(found[0]?.user_id, user.id);

      // More than a batch holds: split into full batches.
      const many = Array.from({ length: LOOKUP_BATCH_MAX + 3 }, (_, i) => tokens[i % 3]!.secret);
      const all = await Promise.all(many.map(find));
      assert.equal(queries(), 3);
      assert.deepEqual(
        all.map((row) => row?.description),
        many.map((_, i) => `t${i % 3}`),
      );

      // Lookups started in different turns of the event loop each go alone.
      assert.equal((await find(tokens[2]!.secret))?.description, 't2');
      assert.equal((await find(tokens[0]!.secret))?.description, 't0');
      assert.equal(queries(), 5);
    });

    it("reads a bearer token's application owner in its one query: a banned owner's tokens carry nothing", async (t) => {
      const h = await build(t, dialect);
      const owner = await h.createUser();
      const user = await h.createUser();
      const client = await registerClient(h, { ownerId: owner.id });
      const issued = await issueAccessToken(
        h.store.db,
        { clientId: client.id, userId: user.id, scope: 'read_confidential', family: 'f'.repeat(64) },
        nowSeconds(),
      );
      const { counting, queries } = countingQueries(h.store);
      const lookup = credentialLookup(counting, nowSeconds, bearerTokens).bearer;
      const active = await lookup(issued.access_token);
      assert.equal(active?.client_owner_privileges, 3);
      assert.equal(queries(), 1);
      await h.setUserPrivileges(owner.id, 0);
      const banned = await lookup(issued.access_token);
      assert.equal(Number(banned?.client_owner_privileges), 0);
      assert.equal(queries(), 2);
      const self = await h.api({
        method: 'GET',
        path: '/tokens/self',
        headers: { authorization: `Bearer ${issued.access_token}` },
      });
      assert.equal(self.statusCode, 200);
      assert.equal((self.json() as { privileges: number }).privileges, 0);
    });

    it('is closed with the store, and closing the store again is harmless', async (t) => {
      const h = await build(t, dialect);
      const user = await h.createUser();
      const { secret } = await h.createToken(user.id);
      const store = await openStore(h.database.config, { poolSize: 2 });
      const lookup = tokenLookup(store);
      assert.ok(await lookup(secret));
      await store.close();
      await store.close();
      await assert.rejects(async () => lookup(secret));
      // Two lookups together need a statement not prepared before the close: no connection reopens for it.
      await assert.rejects(Promise.all([secret, `${secret}x`].map((s) => lookup(s))));
    });

    if (dialect === 'postgres')
      it('runs on a pool of its own whose sessions plan the lookup once; other queries keep the default', async (t) => {
        const h = await build(t, dialect);
        const user = await h.createUser();
        const { secret, id } = await h.createToken(user.id);
        const lookup = tokenLookup(h.store);
        // One at a time: the pool hands the same idle connection back each time.
        for (let i = 0; i < 8; i++) assert.equal((await lookup(secret))?.id, id);
        const onLookupPool = h.store.hotQuery<{ mode: string; generic: number; custom: number }>(
          `select current_setting('plan_cache_mode') as mode,
                  coalesce(sum(generic_plans), 0)::int as generic, coalesce(sum(custom_plans), 0)::int as custom
           from pg_prepared_statements where statement like '%token_hash%'`,
        );
        const [plans] = await onLookupPool([]);
        assert.equal(plans?.mode, 'force_generic_plan');
        // The lookup was planned for any parameters, never for each execution's own.
        assert.ok((plans?.generic ?? 0) >= 8, JSON.stringify(plans));
        assert.equal(plans?.custom, 0);
        const main = await sql<{ mode: string }>`select current_setting('plan_cache_mode') as mode`.execute(
          h.store.db,
        );
        assert.equal(main.rows[0]?.mode, 'auto');
      });
  });
}
