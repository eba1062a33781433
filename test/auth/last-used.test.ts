// A token's last use between its flush's start and its commit: the batcher still answers it as pending
// (the token page and GET /v1/tokens read it), so no page shows "Never used" for a token just used while
// the write of that use is on its way.
import { describe, it } from 'node:test';
import assert from 'node:assert/strict';
import type { KyselyPlugin } from 'kysely';
import { DIALECTS } from '../helpers/dialects.ts';
import { build } from '../helpers/app.ts';
import { LastUsedBatcher } from '../../src/auth/last-used.ts';

for (const dialect of DIALECTS)
  describe(`token uses being written [${dialect}]`, () => {
    it('are answered as pending until their write has committed, then read from the row', async (t) => {
      const h = await build(t, dialect);
      const user = await h.createUser();
      const { id } = await h.createToken(user.id);
      // Every statement's answer waits for `release`: the flush is held between its start and its end.
      let release!: () => void;
      const held = new Promise<void>((resolve) => (release = resolve));
      const hold: KyselyPlugin = {
        transformQuery: (args) => args.node,
        transformResult: async (args) => {
          await held;
          return args.result;
        },
      };
      const batcher = new LastUsedBatcher(h.store.db.withPlugin(hold), h.app.log, (raw) => raw);
      const at = 1_900_000_000;
      batcher.touch(id, at, '192.0.2.7');
      const flushing = batcher.flush();
      await new Promise((resolve) => setImmediate(resolve));
      assert.equal(batcher.pendingUse(id), at, 'the use being written is still pending');
      assert.equal(batcher.pendingAddress(id), '192.0.2.7');
      release();
      await flushing;
      assert.equal(batcher.pendingUse(id), undefined, 'written: the row answers now');
      const row = await h.store.db
        .selectFrom('tokens')
        .select(['last_updated', 'last_address'])
        .where('id', '=', id)
        .executeTakeFirstOrThrow();
      assert.equal(Number(row.last_updated), at);
      assert.equal(row.last_address, '192.0.2.7');
    });
  });
