// TOKENS_PER_USER_MAX: a user's live API tokens are capped on every creation path; the cap comes after the
// spec's checks 1-7, nothing is stored beyond it, and concurrent creations cannot pass it together.
import { describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { DIALECTS } from '../helpers/dialects.ts';
import { build, body, type Harness, type TestUser } from '../helpers/app.ts';
import { InjectBrowser, csrfOf } from '../helpers/inject-browser.ts';
import { countLiveApiTokens } from '../../src/auth/mint.ts';
import { nowSeconds } from '../../src/auth/clock.ts';

const create = (h: Harness, user: TestUser, password = user.password) =>
  h.api({ method: 'POST', path: '/tokens', payload: { username: user.username, password } });

const live = (h: Harness, user: TestUser) => countLiveApiTokens(h.store.db, user.id, nowSeconds());

for (const dialect of DIALECTS) {
  describe(`the token cap [${dialect}]`, () => {
    it('answers 409 naming the limit once the user holds TOKENS_PER_USER_MAX live tokens; stores nothing', async (t) => {
      const h = await build(t, dialect, { TOKENS_PER_USER_MAX: '3', LOGIN_RATE_LIMIT: '100' });
      const user = await h.createUser();
      await h.createToken(user.id, { private: true }); // private tokens count
      for (let i = 0; i < 2; i++) assert.equal((await create(h, user)).statusCode, 200);
      const refused = await create(h, user);
      assert.equal(refused.statusCode, 409);
      assert.equal(body(refused).code, 409);
      assert.match(String(body(refused).message), /3 live API tokens.*TOKENS_PER_USER_MAX/);
      assert.equal(body(refused).token, undefined);
      assert.equal(await live(h, user), 3);

      // Checks 1-7 come first: a wrong password is still 403, a banned user still 402.
      assert.equal((await create(h, user, 'wrong')).statusCode, 403);
      await h.setUserPrivileges(user.id, 1);
      assert.equal((await create(h, user)).statusCode, 402);
      await h.setUserPrivileges(user.id, 3);

      // Expired tokens and web sessions do not count.
      await h.store.db
        .updateTable('tokens')
        .set({ expires_at: nowSeconds() - 1 })
        .where('user_id', '=', user.id)
        .where('private', '=', 1)
        .execute();
      const browser = new InjectBrowser(h.app);
      await browser.signIn(user);
      await browser.signIn(user);
      assert.equal((await create(h, user)).statusCode, 200);
      assert.equal((await create(h, user)).statusCode, 409);
      const other = await h.createUser();
      assert.equal((await create(h, other)).statusCode, 200, 'the cap is per user');
    });

    it('lets exactly the cap through when creations race', async (t) => {
      const h = await build(t, dialect, { TOKENS_PER_USER_MAX: '4', LOGIN_RATE_LIMIT: '100' });
      const user = await h.createUser();
      const answers = await Promise.all(Array.from({ length: 12 }, () => create(h, user)));
      const codes = answers.map((r) => r.statusCode).sort();
      assert.deepEqual(codes, [200, 200, 200, 200, 409, 409, 409, 409, 409, 409, 409, 409]);
      assert.equal(await live(h, user), 4);
    });

    it('the token page refuses with 409 and a message, creating nothing', async (t) => {
      const h = await build(t, dialect, { TOKENS_PER_USER_MAX: '1' });
      const user = await h.createUser();
      await h.createToken(user.id);
      const browser = new InjectBrowser(h.app);
      await browser.signIn(user);
      const page = await browser.get('/tokens');
      const r = await browser.post('/tokens', { _csrf: csrfOf(page.body), description: 'one more' });
      assert.equal(r.statusCode, 409);
      assert.match(r.body, /You already have the most tokens allowed \(1\)/);
      assert.equal(await live(h, user), 1);
    });
  });
}
