// Revoke by id: POST /v1/tokens/{id}/delete and DELETE /v1/tokens/{id} revoke one of the caller's own tokens,
// with an API token that carries Write; a privileges-0 token, a web session, a bearer token and a banned
// owner's token cannot.
import { describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { DIALECTS } from '../helpers/dialects.ts';
import { build, body, ACTIVE, type Harness } from '../helpers/app.ts';
import { InjectBrowser } from '../helpers/inject-browser.ts';
import { exchangeCode, obtainCode, pkcePair, registerClient } from '../helpers/oauth.ts';
import { TokenPrivilege } from '../../src/auth/privileges.ts';

/** What revoking by id needs. */
const WRITE = { privileges: TokenPrivilege.Write };

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
    call: (h: Harness, id: string, headers: Record<string, string>, cookies?: Record<string, string>) =>
      h.api({ method: 'POST', path: `/tokens/${id}/delete`, headers, cookies }),
  },
  {
    name: 'DELETE /tokens/{id}',
    call: (h: Harness, id: string, headers: Record<string, string>, cookies?: Record<string, string>) =>
      h.api({ method: 'DELETE', path: `/tokens/${id}`, headers, cookies }),
  },
];

for (const dialect of DIALECTS) {
  for (const { name, call } of revokers) {
    describe(`revoke by id: ${name} [${dialect}]`, () => {
      it("revokes one of the caller's tokens, which then stops working", async (t) => {
        const h = await build(t, dialect);
        const user = await h.createUser();
        const caller = await h.createToken(user.id, { ...WRITE, description: 'caller' });
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
        const token = await h.createToken(user.id, WRITE);
        assert.equal((await call(h, String(token.id), as(token.secret))).statusCode, 200);
        assert.equal(await authenticates(h, token.secret), false);
      });

      it("answers 404 alike for someone else's token and for an id that does not exist", async (t) => {
        const h = await build(t, dialect);
        const me = await h.createUser();
        const other = await h.createUser();
        const mine = await h.createToken(me.id, WRITE);
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
        const caller = await h.createToken(user.id, WRITE);
        const session = await h.createToken(user.id, { private: true });
        assert.equal((await call(h, String(session.id), as(caller.secret))).statusCode, 404);
        assert.equal(await authenticates(h, session.secret), true);
      });

      it('answers 401 without an identified credential', async (t) => {
        const h = await build(t, dialect);
        const user = await h.createUser();
        const token = await h.createToken(user.id);
        for (const headers of [{}, as('0'.repeat(32))]) {
          const r = await call(h, String(token.id), headers);
          assert.equal(r.statusCode, 401, r.body);
          assert.equal(body(r).code, 401);
        }
        assert.equal(await authenticates(h, token.secret), true);
      });

      it('a segment that is not digits is no path: the 404 with X-Real-404, with or without a credential', async (t) => {
        const h = await build(t, dialect);
        const user = await h.createUser();
        const token = await h.createToken(user.id, WRITE);
        for (const headers of [{}, as(token.secret)])
          for (const id of ['abc', '1.5', '-3', '0x10', '1e3', '+7', ' 7', '%37%2e']) {
            const r = await call(h, id, headers);
            assert.equal(r.statusCode, 404, `${id}: ${r.body}`);
            assert.equal(r.headers['x-real-404'], 'yes', id);
            assert.deepEqual(body(r), { code: 404, message: 'No such endpoint.' }, id);
          }
        // Digits with leading zeros are an id (007 is 7); one beyond any stored id is no token of the caller's.
        for (const id of ['0', '00', String(2 ** 31), '9'.repeat(30)]) {
          const r = await call(h, id, as(token.secret));
          assert.equal(r.statusCode, 404, `${id}: ${r.body}`);
          assert.equal(r.headers['x-real-404'], undefined, id);
          assert.match(String(body(r).message), /no token with that id/, id);
        }
        const other = await h.createToken(user.id);
        const padded = await call(h, `00${other.id}`, as(token.secret));
        assert.equal(padded.statusCode, 200, padded.body);
        assert.equal(await authenticates(h, other.secret), false);
        assert.equal(await authenticates(h, token.secret), true);
      });
    });

    describe(`revoke by id needs an API token carrying Write: ${name} [${dialect}]`, () => {
      /** A refusal for lack of Write: 401, the envelope naming the privilege. */
      const assertLacksWrite = (r: Awaited<ReturnType<typeof call>>) => {
        assert.equal(r.statusCode, 401, r.body);
        assert.equal(body(r).code, 401);
        assert.match(String(body(r).message), /missing: Write\b/);
      };

      it('a privileges-0 token of the owner is refused; the target still works, and Write revokes it', async (t) => {
        const h = await build(t, dialect);
        const user = await h.createUser();
        const powerless = await h.createToken(user.id);
        const target = await h.createToken(user.id);
        // Every privilege but Write, held by the owner, does not do either.
        const admin = await h.createUser({ privileges: 0x7fffff });
        const allButWrite = await h.createToken(admin.id, { privileges: 0x3fff & ~TokenPrivilege.Write });
        const adminTarget = await h.createToken(admin.id);
        assertLacksWrite(await call(h, String(target.id), as(powerless.secret)));
        assertLacksWrite(await call(h, String(adminTarget.id), as(allButWrite.secret)));
        assert.equal(await authenticates(h, target.secret), true);
        assert.equal(await authenticates(h, adminTarget.secret), true);

        const writer = await h.createToken(user.id, WRITE);
        assert.equal((await call(h, String(target.id), as(writer.secret))).statusCode, 200);
        assert.equal(await authenticates(h, target.secret), false);
      });

      it("a web session in the rt cookie, sent from this server's own origin, is refused", async (t) => {
        const h = await build(t, dialect);
        const user = await h.createUser();
        const target = await h.createToken(user.id);
        const browser = new InjectBrowser(h.app);
        await browser.signIn(user);
        const cookies = { rt: browser.cookies.get('rt') ?? '' };
        // The cookie identifies the session's owner; the Origin is this server's, so the cookie rule
        // (403) lets the request through, and what refuses it is the missing privilege.
        const self = await h.api({ method: 'GET', path: '/tokens/self', cookies });
        assert.equal(self.statusCode, 200, self.body);
        const headers = { origin: 'http://localhost' };
        assertLacksWrite(await call(h, String(target.id), headers, cookies));
        assert.equal(await authenticates(h, target.secret), true);
        // The same cookie and Origin do reach the API: a write that needs no privilege goes through.
        const bye = await h.api({ method: 'DELETE', path: '/tokens/self', cookies, headers });
        assert.equal(bye.statusCode, 200, bye.body);
        assert.equal(await authenticates(h, target.secret), true);
      });

      it('a bearer token is refused, even one whose scopes carry Write', async (t) => {
        const h = await build(t, dialect);
        const user = await h.createUser();
        const target = await h.createToken(user.id);
        const owner = await h.createUser();
        const client = await registerClient(h, { ownerId: owner.id });
        const browser = new InjectBrowser(h.app);
        await browser.signIn(user);
        const { verifier, challenge } = pkcePair();
        const code = await obtainCode(browser, { client, challenge, scope: 'read_confidential write' });
        const exchanged = await exchangeCode(h, client, code, verifier);
        assert.equal(exchanged.statusCode, 200, exchanged.body);
        const headers = { authorization: `Bearer ${String(exchanged.json().access_token)}` };
        const self = await h.api({ method: 'GET', path: '/tokens/self', headers });
        assert.equal(self.statusCode, 200, self.body);
        assert.equal(Number(body(self).privileges) & TokenPrivilege.Write, TokenPrivilege.Write);

        const r = await call(h, String(target.id), headers);
        assert.equal(r.statusCode, 401, r.body);
        assert.equal(body(r).code, 401);
        assert.match(String(body(r).message), /bearer token cannot revoke/i);
        assert.equal(await authenticates(h, target.secret), true);
      });

      it("a banned owner's (no UserNormal) Write token is refused; once unbanned, or only restricted, it revokes", async (t) => {
        const h = await build(t, dialect);
        const user = await h.createUser();
        const writer = await h.createToken(user.id, WRITE);
        const target = await h.createToken(user.id);
        for (const banned of [0, ACTIVE & ~2, 8 | 1]) {
          await h.setUserPrivileges(user.id, banned);
          assertLacksWrite(await call(h, String(target.id), as(writer.secret)));
          assert.equal(await authenticates(h, target.secret), true, `privileges ${banned}`);
        }
        // restricted (UserNormal without UserPublic): the token keeps Write, as in the family
        const spare = await h.createToken(user.id);
        await h.setUserPrivileges(user.id, ACTIVE & ~1);
        assert.equal((await call(h, String(spare.id), as(writer.secret))).statusCode, 200);
        assert.equal(await authenticates(h, spare.secret), false);
        await h.setUserPrivileges(user.id, ACTIVE);
        assert.equal((await call(h, String(target.id), as(writer.secret))).statusCode, 200);
        assert.equal(await authenticates(h, target.secret), false);
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
