// The token page at /tokens, through app.inject with a cookie jar: sign-in, list, create, revoke, CSRF.
import { describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { DIALECTS } from '../helpers/dialects.ts';
import { build, body, scrapeMetrics, WITH_METRICS, type Harness } from '../helpers/app.ts';
import { InjectBrowser, FORM, csrfOf } from '../helpers/inject-browser.ts';
import { TokenPrivilege, UserPrivilege } from '../../src/auth/privileges.ts';
import { nowSeconds } from '../../src/auth/clock.ts';

async function signedIn(h: Harness, privileges?: number) {
  const user = await h.createUser(privileges === undefined ? {} : { privileges });
  const browser = new InjectBrowser(h.app);
  await browser.signIn(user);
  return { user, browser };
}

/** Posts a form whose fields may repeat (several privileges). */
function postForm(browser: InjectBrowser, url: string, fields: Array<[string, string]>) {
  return browser.request({
    method: 'POST',
    url,
    headers: FORM,
    payload: new URLSearchParams(fields).toString(),
  });
}

const checkboxes = (html: string): string[] =>
  [...html.matchAll(/<input\s+type="checkbox"\s+name="privileges"\s+value="([^"]+)"/g)].map(
    (m) => m[1] as string,
  );

const secretOf = (html: string): string | undefined =>
  /id="new-token"[^>]*value="([0-9a-f]{32})"/s.exec(html)?.[1];

async function apiTokens(h: Harness, secret: string) {
  const r = await h.api({ method: 'GET', path: '/tokens', headers: { 'x-ripple-token': secret } });
  assert.equal(r.statusCode, 200, r.body);
  return body(r).tokens as Array<Record<string, unknown>>;
}

for (const dialect of DIALECTS) {
  describe(`token page [${dialect}]`, () => {
    it('sends a visitor who is not signed in to the login, and back afterwards', async (t) => {
      const h = await build(t, dialect);
      const r = await h.app.inject({ url: '/tokens' });
      assert.equal(r.statusCode, 303);
      assert.equal(r.headers.location, '/login?next=%2Ftokens');
      const user = await h.createUser();
      const browser = new InjectBrowser(h.app);
      const login = await browser.get('/login?next=%2Ftokens');
      const signIn = await browser.post('/login', {
        _csrf: csrfOf(login.body),
        username: user.username,
        password: user.password,
        next: '/tokens',
      });
      assert.equal(signIn.headers.location, '/tokens');
      assert.equal((await browser.get('/tokens')).statusCode, 200);
    });

    it('lists public tokens with description, privilege names, last use and expiry; never private ones', async (t) => {
      const h = await build(t, dialect);
      const { user, browser } = await signedIn(h);
      const token = await h.createToken(user.id, {
        description: 'CI <deploy> & more',
        privileges: TokenPrivilege.Write | TokenPrivilege.Bancho,
      });
      await h.createToken(user.id, { description: 'hidden private one', private: true });
      await h.store.db
        .updateTable('tokens')
        .set({ last_updated: nowSeconds() - 185, expires_at: nowSeconds() + 3 * 86_400 + 60 })
        .where('id', '=', token.id)
        .execute();
      const page = await browser.get('/tokens');
      assert.equal(page.statusCode, 200);
      assert.match(String(page.headers['content-type']), /^text\/html/);
      assert.equal(page.headers['cache-control'], 'no-store');
      assert.match(String(page.headers['content-security-policy']), /default-src 'none'/);
      assert.match(page.body, /CI &lt;deploy&gt; &amp; more/);
      assert.doesNotMatch(page.body, /<deploy>/);
      assert.match(page.body, /Write, Bancho/);
      assert.match(page.body, /3 minutes ago/);
      assert.match(page.body, /in 3 days/);
      assert.doesNotMatch(page.body, /hidden private one|web login/);
      assert.match(page.body, new RegExp(`href="/tokens/${token.id}/revoke"`));
    });

    it('offers exactly the privileges the user may give a token', async (t) => {
      const h = await build(t, dialect);
      const { browser } = await signedIn(h);
      assert.deepEqual(checkboxes((await browser.get('/tokens')).body), [
        'ReadConfidential',
        'Write',
        'Bancho',
      ]);
      const admin = await signedIn(
        h,
        UserPrivilege.UserPublic |
          UserPrivilege.UserNormal |
          UserPrivilege.AdminAccessRAP |
          UserPrivilege.AdminManageServer,
      );
      assert.deepEqual(checkboxes((await admin.browser.get('/tokens')).body), [
        'ReadConfidential',
        'Write',
        'ViewUserAdvanced',
        'APIMeta',
        'Bancho',
      ]);
    });

    it('creates a token from the chosen privileges and shows its secret once', async (t) => {
      const h = await build(t, dialect, WITH_METRICS);
      const { browser } = await signedIn(h);
      const page = await browser.get('/tokens');
      const created = await postForm(browser, '/tokens', [
        ['_csrf', csrfOf(page.body)],
        ['description', 'my bot'],
        ['privileges', 'Write'],
        ['privileges', 'Bancho'],
        ['expires_in', String(7 * 86_400)],
      ]);
      // Answered by a redirect to the page that shows the secret; the secret is not in the address.
      assert.equal(created.statusCode, 303, created.body);
      const location = String(created.headers.location);
      assert.match(location, /^\/tokens\?created=\d+$/);
      const shown = await browser.get(location);
      const secret = secretOf(shown.body);
      assert.ok(secret, 'the secret is on the page');
      assert.match(shown.body, /shown only this once/);
      assert.equal(location.includes(secret), false);
      const self = await h.api({
        method: 'GET',
        path: '/tokens/self',
        headers: { 'x-ripple-token': secret },
      });
      assert.equal(body(self).privileges, TokenPrivilege.Write | TokenPrivilege.Bancho);
      assert.equal(body(self).description, 'my bot');
      const listed = await apiTokens(h, secret);
      assert.equal(listed.length, 1);
      const expiresAt = listed[0]!.expires_at as number;
      assert.ok(Math.abs(expiresAt - (nowSeconds() + 7 * 86_400)) <= 5);
      // Never again: the list page does not carry it.
      assert.equal((await browser.get('/tokens')).body.includes(secret), false);
      assert.match(await scrapeMetrics(h), /^tokend_tokens_created_total\{via="web"\} 1$/m);
    });

    it('refuses a privilege the user may not give (a forged form) and makes no token', async (t) => {
      const h = await build(t, dialect);
      const { user, browser } = await signedIn(h);
      const page = await browser.get('/tokens');
      for (const forged of ['ManageUser', 'Read', 'NoSuchThing']) {
        const r = await postForm(browser, '/tokens', [
          ['_csrf', csrfOf(page.body)],
          ['privileges', 'Write'],
          ['privileges', forged],
        ]);
        assert.equal(r.statusCode, 400, forged);
        assert.match(r.body, new RegExp(`cannot give a token these privileges: ${forged}`));
        assert.equal(secretOf(r.body), undefined);
      }
      const r = await postForm(browser, '/tokens', [
        ['_csrf', csrfOf(page.body)],
        ['expires_in', 'soon'],
      ]);
      assert.equal(r.statusCode, 400);
      const rows = await h.store.db
        .selectFrom('tokens')
        .select('id')
        .where('user_id', '=', user.id)
        .where('private', '=', 0)
        .execute();
      assert.equal(rows.length, 0);
    });

    it('refuses a form whose text field is sent twice (its declared schema), and makes no token', async (t) => {
      const h = await build(t, dialect);
      const { user, browser } = await signedIn(h);
      const page = await browser.get('/tokens');
      const r = await postForm(browser, '/tokens', [
        ['_csrf', csrfOf(page.body)],
        ['description', 'one'],
        ['description', 'two'],
      ]);
      assert.equal(r.statusCode, 400);
      assert.match(r.body, /body\/description must be string/);
      const rows = await h.store.db.selectFrom('tokens').select('id').where('user_id', '=', user.id);
      assert.equal((await rows.where('private', '=', 0).execute()).length, 0);
    });

    it('refuses forms without a valid CSRF token', async (t) => {
      const h = await build(t, dialect);
      const { user, browser } = await signedIn(h);
      const token = await h.createToken(user.id);
      for (const fields of [[], [['_csrf', 'forged-token']]] as Array<Array<[string, string]>>) {
        const create = await postForm(browser, '/tokens', [...fields, ['description', 'x']]);
        assert.equal(create.statusCode, 403, create.body);
        const revoke = await postForm(browser, `/tokens/${token.id}/revoke`, fields);
        assert.equal(revoke.statusCode, 403, revoke.body);
      }
      assert.equal((await apiTokens(h, token.secret)).length, 1, 'nothing was created or revoked');
    });

    it('revokes a token after a confirmation page', async (t) => {
      const h = await build(t, dialect);
      const { user, browser } = await signedIn(h);
      const keep = await h.createToken(user.id, { description: 'keep' });
      const drop = await h.createToken(user.id, { description: 'drop me' });
      const confirm = await browser.get(`/tokens/${drop.id}/revoke`);
      assert.equal(confirm.statusCode, 200);
      assert.match(confirm.body, /Revoke this token\?/);
      assert.match(confirm.body, /drop me/);
      assert.match(confirm.body, new RegExp(`<form method="post" action="/tokens/${drop.id}/revoke">`));
      assert.equal((await apiTokens(h, keep.secret)).length, 2, 'showing the confirmation revokes nothing');
      const done = await browser.post(`/tokens/${drop.id}/revoke`, { _csrf: csrfOf(confirm.body) });
      assert.equal(done.statusCode, 303);
      assert.equal(done.headers.location, '/tokens?revoked=1');
      assert.match((await browser.get('/tokens?revoked=1')).body, /The token was revoked\./);
      assert.deepEqual(
        (await apiTokens(h, keep.secret)).map((x) => x.id),
        [keep.id],
      );
    });

    it("answers 404 for someone else's token, and leaves it alone", async (t) => {
      const h = await build(t, dialect);
      const { browser } = await signedIn(h);
      const other = await h.createUser();
      const theirs = await h.createToken(other.id);
      const page = await browser.get('/tokens');
      assert.equal((await browser.get(`/tokens/${theirs.id}/revoke`)).statusCode, 404);
      assert.equal((await browser.get('/tokens/abc/revoke')).statusCode, 404);
      const post = await browser.post(`/tokens/${theirs.id}/revoke`, { _csrf: csrfOf(page.body) });
      assert.equal(post.statusCode, 404);
      assert.equal((await apiTokens(h, theirs.secret)).length, 1);
    });
  });
}
