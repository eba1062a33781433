// The credential lookup (Store.hotRow): on a SQLite file a synchronous read on a query-only connection
// of its own, elsewhere a server-side prepared statement. On every dialect it sees committed tokens only,
// and it never waits for a transaction open on the store's main connection.
import { describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { DIALECTS } from '../helpers/dialects.ts';
import { build } from '../helpers/app.ts';
import { issueToken, nowSeconds } from '../../src/tokens/service.ts';
import { tokenLookup } from '../../src/tokens/repository.ts';
import { hashTokenSecret } from '../../src/tokens/secret.ts';

for (const dialect of DIALECTS) {
  describe(`credential lookup [${dialect}]`, () => {
    it('does not see a token inserted by a transaction until it commits', async (t) => {
      const h = await build(t, dialect);
      const user = await h.createUser();
      const self = (secret: string) =>
        h.app.inject({ method: 'GET', url: '/api/v1/tokens/self', headers: { 'x-ripple-token': secret } });

      const secret = await h.store.db.transaction().execute(async (trx) => {
        const issued = await issueToken(trx, h.store.dialect, {
          userId: user.id,
          privileges: 0,
          description: 'pending',
          private: false,
          now: nowSeconds(),
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

    it('answers at once on SQLite, through a promise on a database server', async (t) => {
      const h = await build(t, dialect);
      const user = await h.createUser();
      const { secret, id } = await h.createToken(user.id, { description: 'found' });
      const lookup = tokenLookup(h.store);
      const found = lookup(hashTokenSecret(secret));
      assert.equal(found instanceof Promise, dialect !== 'sqlite');
      assert.equal((await found)?.id, id);
      assert.equal(await lookup(hashTokenSecret(`${secret}x`)), undefined);
    });
  });
}
