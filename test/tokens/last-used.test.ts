// last_updated: set at creation, moved by each use, written in batches and on shutdown.
import { describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { DIALECTS } from '../helpers/dialects.ts';
import { build, body, sharedHarness, type Harness } from '../helpers/app.ts';
import { openStore } from '../../src/store/database.ts';
import type { InjectOptions } from 'fastify';

const now = () => Math.floor(Date.now() / 1000);
const auth = (secret: string) => ({ 'x-ripple-token': secret });
const LONG_AGO = 1_000_000_000; // 2001

async function setLastUpdated(h: Harness, tokenId: number, at: number) {
  await h.store.db.updateTable('tokens').set({ last_updated: at }).where('id', '=', tokenId).execute();
}

async function storedLastUpdated(h: Harness, tokenId: number): Promise<number> {
  const row = await h.store.db
    .selectFrom('tokens')
    .select('last_updated')
    .where('id', '=', tokenId)
    .executeTakeFirstOrThrow();
  return Number(row.last_updated);
}

for (const dialect of DIALECTS) {
  describe(`last_updated [${dialect}]`, () => {
    const harness = sharedHarness(dialect);
    it('a use moves last_updated: the list shows it at once, the row after a flush', async () => {
      const h = harness();
      const user = await h.createUser();
      const used = await h.createToken(user.id, { description: 'used' });
      const idle = await h.createToken(user.id, { description: 'idle' });
      await setLastUpdated(h, used.id, LONG_AGO);
      await setLastUpdated(h, idle.id, LONG_AGO);

      const before = now();
      const list = await h.api({ method: 'GET', path: '/tokens', headers: auth(used.secret) });
      const listed = body(list).tokens as Array<{ id: number; last_updated: number }>;
      const usedEntry = listed.find((x) => x.id === used.id);
      const idleEntry = listed.find((x) => x.id === idle.id);
      assert.ok(usedEntry && usedEntry.last_updated >= before, JSON.stringify(listed));
      assert.equal(idleEntry?.last_updated, LONG_AGO);

      await h.app.tokend.lastUsed.flush();
      const written = await storedLastUpdated(h, used.id);
      assert.ok(written >= before && written <= now(), `stored ${written}`);
      assert.equal(await storedLastUpdated(h, idle.id), LONG_AGO);

      const self = await h.api({ method: 'GET', path: '/tokens/self', headers: auth(used.secret) });
      assert.ok(Number(body(self).last_updated) >= before);
    });

    it('every transport counts as a use; an unknown credential touches nothing', async () => {
      const h = harness();
      const user = await h.createUser();
      const token = await h.createToken(user.id);
      const other = await h.createToken(user.id);
      await setLastUpdated(h, other.id, LONG_AGO);
      const requests: Array<Pick<InjectOptions, 'headers' | 'query' | 'cookies'>> = [
        { headers: auth(token.secret) },
        { headers: { authorization: `Bearer ${token.secret}` } },
        { query: { token: token.secret } },
        { query: { k: token.secret } },
        { cookies: { rt: token.secret } },
      ];
      for (const request of requests) {
        await setLastUpdated(h, token.id, LONG_AGO);
        const before = now();
        await h.api({ method: 'GET', path: '/ping', ...request });
        await h.app.tokend.lastUsed.flush();
        assert.ok((await storedLastUpdated(h, token.id)) >= before, JSON.stringify(Object.keys(request)));
      }
      await h.api({ method: 'GET', path: '/ping', headers: auth('f'.repeat(32)) });
      await h.app.tokend.lastUsed.flush();
      assert.equal(await storedLastUpdated(h, other.id), LONG_AGO);
    });

    it('last_updated never moves backwards when a newer time is already stored', async () => {
      const h = harness();
      const user = await h.createUser();
      const token = await h.createToken(user.id);
      const future = now() + 10_000;
      await setLastUpdated(h, token.id, future);
      await h.api({ method: 'GET', path: '/ping', headers: auth(token.secret) });
      await h.app.tokend.lastUsed.flush();
      assert.equal(await storedLastUpdated(h, token.id), future);
    });

    it('closing the app flushes pending uses', async (t) => {
      const h = await build(t, dialect, { LAST_USED_FLUSH_MS: '1000' });
      const user = await h.createUser();
      const tokens = [
        await h.createToken(user.id),
        await h.createToken(user.id),
        await h.createToken(user.id),
      ];
      for (const token of tokens) await setLastUpdated(h, token.id, LONG_AGO);
      const before = now();
      for (const token of tokens)
        await h.api({ method: 'GET', path: '/tokens/self', headers: auth(token.secret) });
      await h.app.close();

      // the harness's store was closed with the app; read through a fresh handle
      const reader = await openStore(h.database.config, { migrate: false });
      try {
        const rows = await reader.db
          .selectFrom('tokens')
          .select(['id', 'last_updated'])
          .where('user_id', '=', user.id)
          .execute();
        assert.equal(rows.length, 3);
        for (const row of rows)
          assert.ok(Number(row.last_updated) >= before, `token ${row.id}: ${row.last_updated}`);
      } finally {
        await reader.close();
      }
    });
  });
}
