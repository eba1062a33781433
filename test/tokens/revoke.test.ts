// Revoke by id: POST /v1/tokens/{id}/delete and DELETE /v1/tokens/{id} revoke one of the caller's own tokens.
import { describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { DIALECTS } from '../helpers/dialects.ts';
import { build, body, type Harness } from '../helpers/app.ts';

const as = (secret: string) => ({ 'x-ripple-token': secret });

async function tokenIds(h: Harness, secret: string): Promise<number[]> {
  const r = await h.api({ method: 'GET', path: '/tokens', headers: as(secret) });
  assert.equal(r.statusCode, 200, r.body);
  return (body(r).tokens as Array<{ id: number }>).map((t) => t.id);
}

async function authenticates(h: Harness, secret: string): Promise<boolean> {
  const r = await h.api({ method: 'GET', path: '/tokens/self', headers: as(secret) });
  return r.statusCode === 200;
}

const revokers = [
  {
    name: 'POST /tokens/{id}/delete',
    call: (h: Harness, id: string, headers: Record<string, string>) =>
      h.api({ method: 'POST', path: `/tokens/${id}/delete`, headers }),
  },
  {
    name: 'DELETE /tokens/{id}',
    call: (h: Harness, id: string, headers: Record<string, string>) =>
      h.api({ method: 'DELETE', path: `/tokens/${id}`, headers }),
  },
];

for (const dialect of DIALECTS) {
  for (const { name, call } of revokers) {
    describe(`revoke by id: ${name} [${dialect}]`, () => {
      it("revokes one of the caller's tokens, which then stops working", async (t) => {
        const h = await build(t, dialect);
        const user = await h.createUser();
        const caller = await h.createToken(user.id, { description: 'caller' });
        const target = await h.createToken(user.id, { description: 'target' });
        assert.deepEqual(await tokenIds(h, caller.secret), [caller.id, target.id]);
        const r = await call(h, String(target.id), as(caller.secret));
        assert.equal(r.statusCode, 200, r.body);
        assert.equal(body(r).code, 200);
        assert.equal(typeof body(r).message, 'string');
        assert.equal(await authenticates(h, target.secret), false);
        assert.deepEqual(await tokenIds(h, caller.secret), [caller.id]);
        // Revoking it again: it is gone.
        assert.equal((await call(h, String(target.id), as(caller.secret))).statusCode, 404);
      });

      it('can revoke the very token the request uses', async (t) => {
        const h = await build(t, dialect);
        const user = await h.createUser();
        const token = await h.createToken(user.id);
        assert.equal((await call(h, String(token.id), as(token.secret))).statusCode, 200);
        assert.equal(await authenticates(h, token.secret), false);
      });

      it("answers 404 alike for someone else's token and for an id that does not exist", async (t) => {
        const h = await build(t, dialect);
        const me = await h.createUser();
        const other = await h.createUser();
        const mine = await h.createToken(me.id);
        const theirs = await h.createToken(other.id);
        const foreign = await call(h, String(theirs.id), as(mine.secret));
        const absent = await call(h, String(theirs.id + 1000), as(mine.secret));
        const huge = await call(h, '99999999999999999999', as(mine.secret));
        for (const r of [foreign, absent, huge]) assert.equal(r.statusCode, 404, r.body);
        assert.deepEqual(body(foreign), body(absent));
        assert.deepEqual(body(foreign), body(huge));
        assert.equal(await authenticates(h, theirs.secret), true, "the other user's token is untouched");
      });

      it('does not revoke private tokens (they are never listed)', async (t) => {
        const h = await build(t, dialect);
        const user = await h.createUser();
        const caller = await h.createToken(user.id);
        const session = await h.createToken(user.id, { private: true });
        assert.equal((await call(h, String(session.id), as(caller.secret))).statusCode, 404);
        assert.equal(await authenticates(h, session.secret), true);
      });

      it('answers 401 without an identified credential', async (t) => {
        const h = await build(t, dialect);
        const user = await h.createUser();
        const token = await h.createToken(user.id);
        for (const headers of [{}, as('0'.repeat(32))]) {
          // The credential is checked before the id: a caller without one learns nothing.
          for (const id of [String(token.id), 'abc']) {
            const r = await call(h, id, headers);
            assert.equal(r.statusCode, 401, r.body);
            assert.equal(body(r).code, 401);
          }
        }
        assert.equal(await authenticates(h, token.secret), true);
      });

      it('answers 400 for an id that is not an integer', async (t) => {
        const h = await build(t, dialect);
        const user = await h.createUser();
        const token = await h.createToken(user.id);
        for (const id of ['abc', '1.5', '-3', '0x10', '1e3']) {
          const r = await call(h, id, as(token.secret));
          assert.equal(r.statusCode, 400, `${id}: ${r.body}`);
          assert.equal(body(r).code, 400);
          assert.match(String(body(r).message), /token id must be a positive integer/);
        }
        assert.equal(await authenticates(h, token.secret), true);
      });
    });
  }

  describe(`revoke by id leaves /tokens/self alone [${dialect}]`, () => {
    it('POST /tokens/self/delete and DELETE /tokens/self still delete the current token', async (t) => {
      const h = await build(t, dialect);
      const user = await h.createUser();
      const a = await h.createToken(user.id);
      const b = await h.createToken(user.id);
      const viaPost = await h.api({ method: 'POST', path: '/tokens/self/delete', headers: as(a.secret) });
      assert.equal(viaPost.statusCode, 200, viaPost.body);
      const viaDelete = await h.api({ method: 'DELETE', path: '/tokens/self', headers: as(b.secret) });
      assert.equal(viaDelete.statusCode, 200, viaDelete.body);
      assert.equal(await authenticates(h, a.secret), false);
      assert.equal(await authenticates(h, b.secret), false);
      // Without a credential, the self routes keep the spec's answers.
      assert.equal((await h.api({ method: 'POST', path: '/tokens/self/delete' })).statusCode, 400);
      assert.equal((await h.api({ method: 'GET', path: '/tokens/self' })).statusCode, 404);
    });
  });
}
