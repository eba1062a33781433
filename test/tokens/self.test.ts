// Reading and deleting the token in use: GET /tokens/self, POST /tokens/self/delete, DELETE /tokens/self.
import { describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { DIALECTS } from '../helpers/dialects.ts';
import { body, sharedHarness, type Harness } from '../helpers/app.ts';

const now = () => Math.floor(Date.now() / 1000);
const auth = (secret: string) => ({ 'x-ripple-token': secret });

async function tokenCount(h: Harness, userId: number) {
  const r = await h.store.db
    .selectFrom('tokens')
    .select((eb) => eb.fn.countAll().as('n'))
    .where('user_id', '=', userId)
    .executeTakeFirstOrThrow();
  return Number(r.n);
}

const DELETES = [
  { method: 'POST', path: '/tokens/self/delete' },
  { method: 'DELETE', path: '/tokens/self' },
] as const;

for (const dialect of DIALECTS) {
  describe(`GET /tokens/self [${dialect}]`, () => {
    const harness = sharedHarness(dialect);
    it('is a 404 saying no token is in use, without an identified credential', async () => {
      const h = harness();
      for (const headers of [{}, auth('0123456789abcdef0123456789abcdef')]) {
        const r = await h.api({ method: 'GET', path: '/tokens/self', headers });
        assert.equal(r.statusCode, 404);
        const b = body(r);
        assert.equal(b.code, 404);
        assert.match(String(b.message), /no token/i);
        assert.equal(b.id, undefined);
      }
    });

    it('answers id, effective privileges, description and last_updated at the top level, and who signed in', async () => {
      const h = harness();
      const user = await h.createUser();
      const token = await h.createToken(user.id, { privileges: 2 | 4 | 2048, description: 'desk app' });
      const before = now();
      const r = await h.api({ method: 'GET', path: '/tokens/self', headers: auth(token.secret) });
      assert.equal(r.statusCode, 200, r.body);
      const b = body(r);
      assert.deepEqual(Object.keys(b).sort(), [
        'code',
        'description',
        'id',
        'last_updated',
        'message',
        'privileges',
        'user_id',
        'username',
      ]);
      assert.equal(b.code, 200);
      assert.equal(b.id, token.id);
      assert.equal(b.user_id, user.id);
      assert.equal(b.username, user.username);
      assert.equal(b.privileges, 6); // APIMeta needs AdminManageServer
      assert.equal(b.description, 'desk app');
      assert.ok(
        Number(b.last_updated) >= before && Number(b.last_updated) <= now() + 1,
        String(b.last_updated),
      );
    });

    it('a private token reads itself too', async () => {
      const h = harness();
      const user = await h.createUser();
      const token = await h.createToken(user.id, { private: true, description: 'web' });
      const r = await h.api({ method: 'GET', path: '/tokens/self', headers: auth(token.secret) });
      assert.equal(body(r).id, token.id);
      assert.equal(body(r).description, 'web');
    });
  });

  for (const del of DELETES) {
    describe(`${del.method} ${del.path} [${dialect}]`, () => {
      const harness = sharedHarness(dialect);
      it('is a 400 saying no token was given, without an identified credential', async () => {
        const h = harness();
        const user = await h.createUser();
        await h.createToken(user.id);
        for (const headers of [{}, auth('0123456789abcdef0123456789abcdef')]) {
          const r = await h.api({ method: del.method, path: del.path, headers });
          assert.equal(r.statusCode, 400);
          assert.equal(body(r).code, 400);
          assert.match(String(body(r).message), /no token/i);
        }
        assert.equal(await tokenCount(h, user.id), 1);
      });

      it('deletes the token in use and only that one', async () => {
        const h = harness();
        const user = await h.createUser();
        const other = await h.createUser();
        const doomed = await h.createToken(user.id, { description: 'doomed' });
        const kept = await h.createToken(user.id, { description: 'kept' });
        const theirs = await h.createToken(other.id);
        const r = await h.api({ method: del.method, path: del.path, headers: auth(doomed.secret) });
        assert.equal(r.statusCode, 200, r.body);
        assert.equal(body(r).code, 200);
        assert.equal(typeof body(r).message, 'string');
        assert.notEqual(body(r).message, '');

        assert.equal(
          (await h.api({ method: 'GET', path: '/tokens/self', headers: auth(doomed.secret) })).statusCode,
          404,
        );
        assert.equal(
          (await h.api({ method: 'GET', path: '/tokens', headers: auth(doomed.secret) })).statusCode,
          401,
        );
        const again = await h.api({ method: del.method, path: del.path, headers: auth(doomed.secret) });
        assert.equal(again.statusCode, 400);

        const stillThere = await h.api({ method: 'GET', path: '/tokens', headers: auth(kept.secret) });
        assert.equal(stillThere.statusCode, 200);
        assert.deepEqual(
          (body(stillThere).tokens as Array<{ id: number }>).map((x) => x.id),
          [kept.id],
        );
        assert.equal(
          body(await h.api({ method: 'GET', path: '/tokens/self', headers: auth(theirs.secret) })).id,
          theirs.id,
        );
        assert.equal(await tokenCount(h, user.id), 1);
        assert.equal(await tokenCount(h, other.id), 1);
      });

      it('an empty body is no body, whatever its content type says', async () => {
        const h = harness();
        const user = await h.createUser();
        for (const contentType of ['application/json', 'text/plain;charset=UTF-8']) {
          const token = await h.createToken(user.id);
          const r = await h.api({
            method: del.method,
            path: del.path,
            headers: { ...auth(token.secret), 'content-type': contentType },
            payload: '',
          });
          assert.equal(r.statusCode, 200, `${contentType}: ${r.body}`);
        }
        const token = await h.createToken(user.id);
        const text = await h.api({
          method: del.method,
          path: del.path,
          headers: { ...auth(token.secret), 'content-type': 'text/plain' },
          payload: 'please delete',
        });
        // read as JSON whatever its label, so not JSON: a 400
        assert.equal(text.statusCode, 400, text.body);
        assert.equal(body(text).code, 400);
        assert.equal(await tokenCount(h, user.id), 1, 'the refused request deleted nothing');
      });

      it('a token of a banned owner can still delete itself', async () => {
        const h = harness();
        const user = await h.createUser();
        const token = await h.createToken(user.id);
        await h.setUserPrivileges(user.id, 0);
        const r = await h.api({ method: del.method, path: del.path, headers: auth(token.secret) });
        assert.equal(r.statusCode, 200, r.body);
        assert.equal(await tokenCount(h, user.id), 0);
      });

      it('a use just before the delete does not bring the token back when uses are flushed', async () => {
        const h = harness();
        const user = await h.createUser();
        const token = await h.createToken(user.id);
        await h.api({ method: 'GET', path: '/tokens/self', headers: auth(token.secret) });
        await h.api({ method: del.method, path: del.path, headers: auth(token.secret) });
        await h.app.tokend.lastUsed.flush();
        assert.equal(await tokenCount(h, user.id), 0);
        assert.equal(
          (await h.api({ method: 'GET', path: '/tokens/self', headers: auth(token.secret) })).statusCode,
          404,
        );
      });
    });
  }
}
