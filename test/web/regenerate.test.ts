// Regenerating a token on the token page: a confirmation, sudo mode, then a new token with the same
// description, privileges and expiry whose secret is shown once, while the old secret stops at once.
import { describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { DIALECTS } from '../helpers/dialects.ts';
import { build, body, scrapeMetrics, WITH_METRICS, type Harness } from '../helpers/app.ts';
import { csrfOf, leaveSudoMode, newSecretOf, signedInUser } from '../helpers/inject-browser.ts';
import { TokenPrivilege } from '../../src/auth/privileges.ts';
import { nowSeconds } from '../../src/auth/clock.ts';

const self = (h: Harness, secret: string) =>
  h.api({ method: 'GET', path: '/tokens/self', headers: { 'x-ripple-token': secret } });

const liveTokens = async (h: Harness, userId: number) =>
  h.store.db
    .selectFrom('tokens')
    .select(['id', 'description', 'privileges', 'expires_at'])
    .where('user_id', '=', userId)
    .where('session', '=', 0)
    .orderBy('id')
    .execute();

for (const dialect of DIALECTS) {
  describe(`regenerating a token [${dialect}]`, () => {
    it('asks first, then replaces the secret: same description, privileges and expiry; the old secret stops', async (t) => {
      const h = await build(t, dialect, WITH_METRICS);
      const { user, browser } = await signedInUser(h);
      const old = await h.createToken(user.id, {
        description: 'score uploader',
        privileges: TokenPrivilege.ReadConfidential | TokenPrivilege.Write,
      });
      const expiresAt = nowSeconds() + 5 * 86_400;
      await h.store.db
        .updateTable('tokens')
        .set({ expires_at: expiresAt })
        .where('id', '=', old.id)
        .execute();
      assert.equal((await self(h, old.secret)).statusCode, 200);

      const list = await browser.get('/tokens');
      assert.match(list.body, new RegExp(`href="/tokens/${old.id}/regenerate"`));
      const confirm = await browser.get(`/tokens/${old.id}/regenerate`);
      assert.equal(confirm.statusCode, 200);
      assert.match(confirm.body, /Regenerate this token\?/);
      assert.match(confirm.body, /score uploader/);
      assert.match(confirm.body, /stops working at once/);
      assert.match(confirm.body, new RegExp(`<form method="post" action="/tokens/${old.id}/regenerate">`));
      assert.equal((await self(h, old.secret)).statusCode, 200, 'showing the confirmation changes nothing');

      const done = await browser.post(`/tokens/${old.id}/regenerate`, { _csrf: csrfOf(confirm.body) });
      assert.equal(done.statusCode, 303, done.body);
      const location = String(done.headers.location);
      const newId = Number(/^\/tokens\?created=(\d+)$/.exec(location)?.[1]);
      assert.ok(newId > old.id, location);
      assert.equal((await self(h, old.secret)).statusCode, 404, 'the old secret stopped at once');

      const shown = await browser.get(location);
      const secret = newSecretOf(shown.body);
      assert.ok(secret, 'the new secret is shown once');
      assert.notEqual(secret, old.secret);
      const now = body(await self(h, secret));
      assert.equal(now.id, newId);
      assert.equal(now.description, 'score uploader');
      assert.equal(now.privileges, TokenPrivilege.ReadConfidential | TokenPrivilege.Write);
      const rows = await liveTokens(h, user.id);
      assert.deepEqual(
        rows.map((r) => ({ ...r, privileges: Number(r.privileges), expires_at: Number(r.expires_at) })),
        [{ id: newId, description: 'score uploader', privileges: 6, expires_at: expiresAt }],
      );
      assert.match(await scrapeMetrics(h), /^tokend_tokens_created_total\{via="web"\} 1$/m);
    });

    it('needs sudo mode: without the password, or with a wrong one, nothing changes', async (t) => {
      const h = await build(t, dialect);
      const { user, browser } = await signedInUser(h);
      const old = await h.createToken(user.id, { description: 'keep me' });
      await leaveSudoMode(h, user.id);
      const confirm = await browser.get(`/tokens/${old.id}/regenerate`);
      assert.match(confirm.body, /name="confirm_password"/);
      const csrf = csrfOf(confirm.body);
      for (const confirm_password of [undefined, 'not the password']) {
        const r = await browser.post(`/tokens/${old.id}/regenerate`, { _csrf: csrf, confirm_password });
        assert.equal(r.statusCode, 403, String(confirm_password));
        assert.match(r.body, /name="confirm_password"[^>]*autofocus/s);
        assert.equal((await self(h, old.secret)).statusCode, 200);
      }
      const right = await browser.post(`/tokens/${old.id}/regenerate`, {
        _csrf: csrf,
        confirm_password: user.password,
      });
      assert.equal(right.statusCode, 303, right.body);
      assert.equal((await self(h, old.secret)).statusCode, 404);
    });

    it("refuses someone else's token, an unknown id and a form without its CSRF token", async (t) => {
      const h = await build(t, dialect);
      const { user, browser } = await signedInUser(h);
      const mine = await h.createToken(user.id);
      const other = await h.createUser();
      const theirs = await h.createToken(other.id);
      const csrf = csrfOf((await browser.get('/tokens')).body);
      for (const id of [String(theirs.id), '999999', 'abc', '0']) {
        assert.equal((await browser.get(`/tokens/${id}/regenerate`)).statusCode, 404, id);
        assert.equal((await browser.post(`/tokens/${id}/regenerate`, { _csrf: csrf })).statusCode, 404, id);
      }
      assert.equal((await browser.post(`/tokens/${mine.id}/regenerate`, {})).statusCode, 403);
      assert.equal((await self(h, theirs.secret)).statusCode, 200);
      assert.equal((await self(h, mine.secret)).statusCode, 200);
    });

    it('works at the per-user cap (the old token makes room), and two at once regenerate it once', async (t) => {
      const h = await build(t, dialect, { TOKENS_PER_USER_MAX: '1' });
      const { user, browser } = await signedInUser(h);
      const old = await h.createToken(user.id, { description: 'only one' });
      const csrf = csrfOf((await browser.get('/tokens')).body);
      const answers = await Promise.all([
        browser.post(`/tokens/${old.id}/regenerate`, { _csrf: csrf }),
        browser.post(`/tokens/${old.id}/regenerate`, { _csrf: csrf }),
      ]);
      assert.deepEqual(answers.map((r) => r.statusCode).sort(), [303, 404]);
      const rows = await liveTokens(h, user.id);
      assert.equal(rows.length, 1, 'one replacement');
      assert.equal(rows[0]?.description, 'only one');
      assert.equal((await self(h, old.secret)).statusCode, 404);
    });
  });
}
