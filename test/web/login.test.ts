// The web sign-in: /login and /logout, the rt cookie, the shared login rate limit, and `next`.
import { describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { DIALECTS } from '../helpers/dialects.ts';
import { build, body } from '../helpers/app.ts';
import { InjectBrowser, csrfOf } from '../helpers/inject-browser.ts';

interface SetCookie {
  name: string;
  value: string;
  path?: string;
  httpOnly?: boolean;
  sameSite?: string;
  secure?: boolean;
}
const rtCookie = (r: { cookies: unknown[] }) => (r.cookies as SetCookie[]).find((c) => c.name === 'rt');

for (const dialect of DIALECTS) {
  describe(`web login [${dialect}]`, () => {
    it('shows an accessible form with username, password and a CSRF token', async (t) => {
      const h = await build(t, dialect);
      const browser = new InjectBrowser(h.app);
      const r = await browser.get('/login');
      assert.equal(r.statusCode, 200);
      assert.match(r.headers['content-type'] as string, /^text\/html; charset=utf-8/);
      assert.match(r.body, /<html lang="en">/);
      assert.match(r.body, /<label for="username">/);
      assert.match(r.body, /name="username"/);
      assert.match(r.body, /<label for="password">/);
      assert.match(r.body, /type="password"\s+id="password"\s+name="password"/);
      // The username has the focus when the page opens (and nothing else has it).
      assert.match(r.body, /id="username"[^>]*autofocus/s);
      assert.equal((r.body.match(/autofocus/g) ?? []).length, 1);
      assert.ok(csrfOf(r.body));
      assert.ok(browser.cookies.has('_csrf'));
      assert.match(r.headers['content-security-policy'] as string, /frame-ancestors 'none'/);
      // Nothing runs and nothing loads from elsewhere; the one link is the server's own icon.
      assert.doesNotMatch(r.body, /<script|https?:\/\//);
      assert.deepEqual(
        [...r.body.matchAll(/<link[^>]*>/g)].map((m) => m[0]),
        ['<link rel="icon" href="/favicon.svg" type="image/svg+xml" />'],
      );
    });

    it('signs in with a private token in an HttpOnly, SameSite=Lax rt cookie', async (t) => {
      const h = await build(t, dialect);
      const user = await h.createUser({ privileges: 3 });
      const browser = new InjectBrowser(h.app);
      const page = await browser.get('/login');
      const r = await browser.post('/login', {
        _csrf: csrfOf(page.body),
        username: user.username,
        password: user.password,
      });
      assert.equal(r.statusCode, 303);
      // Opened directly (no page to go back to), the sign-in lands on the account's token page.
      assert.equal(r.headers.location, '/tokens');
      assert.equal((await browser.get('/tokens')).statusCode, 200);
      const cookie = rtCookie(r);
      assert.ok(cookie);
      assert.match(cookie.value, /^[0-9a-f]{32}$/);
      assert.equal(cookie.httpOnly, true);
      assert.equal(cookie.sameSite, 'Lax');
      assert.equal(cookie.path, '/');
      assert.notEqual(cookie.secure, true);

      const rows = await h.store.db.selectFrom('tokens').select(['user_id', 'private']).execute();
      assert.deepEqual(
        rows.map((row) => ({ ...row })),
        [{ user_id: user.id, private: 1 }],
      );
      // The cookie identifies the user on the API; the private token is never listed.
      const self = await h.api({ method: 'GET', path: '/tokens/self', cookies: { rt: cookie.value } });
      assert.equal(self.statusCode, 200);
      assert.equal(body(self).privileges, 0);
      const list = await h.api({ method: 'GET', path: '/tokens', cookies: { rt: cookie.value } });
      assert.deepEqual(body(list).tokens, []);

      const stored = await h.store.db.selectFrom('tokens').select('expires_at').executeTakeFirstOrThrow();
      const lifetime = Number(stored.expires_at) - Math.floor(Date.now() / 1000);
      assert.ok(lifetime > 29 * 86_400 && lifetime <= 30 * 86_400, `session lifetime ${lifetime}`);
      assert.equal((cookie as SetCookie & { maxAge?: number }).maxAge, 30 * 86_400);

      const signedIn = await browser.get('/login');
      assert.match(signedIn.body, new RegExp(`signed in as <strong>${user.username}</strong>`));

      // An expired session signs nobody in.
      await h.store.db
        .updateTable('tokens')
        .set({ expires_at: Math.floor(Date.now() / 1000) })
        .execute();
      const expired = await browser.get('/login');
      assert.match(expired.body, /<h1>Sign in to tokend<\/h1>/);
    });

    it('marks the cookie Secure when the request came over https (through a trusted proxy)', async (t) => {
      const h = await build(t, dialect, { TRUST_PROXY: 'loopback' });
      const user = await h.createUser();
      const page = await h.app.inject({
        method: 'GET',
        url: '/login',
        headers: { 'x-forwarded-proto': 'https' },
      });
      const csrfCookie = (page.cookies as SetCookie[]).find((c) => c.name === '_csrf');
      assert.equal(csrfCookie?.secure, true);
      const r = await h.app.inject({
        method: 'POST',
        url: '/login',
        headers: { 'x-forwarded-proto': 'https', 'content-type': 'application/x-www-form-urlencoded' },
        cookies: { _csrf: csrfCookie?.value ?? '' },
        payload: new URLSearchParams({
          _csrf: csrfOf(page.body),
          username: user.username,
          password: user.password,
        }).toString(),
      });
      assert.equal(r.statusCode, 303);
      assert.equal(rtCookie(r)?.secure, true);
    });

    it('marks the cookies Secure when PUBLIC_URL is https, over plain HTTP and with no proxy trusted', async (t) => {
      const h = await build(t, dialect, { PUBLIC_URL: 'https://tokens.example' });
      const user = await h.createUser();
      const browser = new InjectBrowser(h.app);
      // A client behind a TLS proxy that TRUST_PROXY does not name: its X-Forwarded-Proto does not count.
      const page = await browser.request({
        method: 'GET',
        url: '/login',
        headers: { 'x-forwarded-proto': 'http' },
      });
      const csrfCookie = (page.cookies as SetCookie[]).find((c) => c.name === '_csrf');
      assert.equal(csrfCookie?.secure, true, '_csrf');
      const r = await browser.post('/login', {
        _csrf: csrfOf(page.body),
        username: user.username,
        password: user.password,
      });
      assert.equal(r.statusCode, 303);
      assert.equal(rtCookie(r)?.secure, true, 'rt');
      const signedIn = await browser.get('/login');
      const out = await browser.post('/logout', { _csrf: csrfOf(signedIn.body) });
      assert.equal(out.statusCode, 303);
      assert.equal(rtCookie(out)?.value, '');
      assert.equal(rtCookie(out)?.secure, true, 'the cleared rt');
    });

    it('leaves the cookies without Secure when PUBLIC_URL is http', async (t) => {
      const h = await build(t, dialect, { PUBLIC_URL: 'http://127.0.0.1:8080' });
      const user = await h.createUser();
      const browser = new InjectBrowser(h.app);
      const page = await browser.get('/login');
      assert.notEqual((page.cookies as SetCookie[]).find((c) => c.name === '_csrf')?.secure, true);
      const r = await browser.post('/login', {
        _csrf: csrfOf(page.body),
        username: user.username,
        password: user.password,
      });
      assert.equal(r.statusCode, 303);
      assert.notEqual(rtCookie(r)?.secure, true);
    });

    it('refuses wrong passwords, unknown users, legacy passwords and banned users', async (t) => {
      const h = await build(t, dialect);
      const user = await h.createUser();
      const legacy = await h.createUser({ passwordVersion: 1 });
      const banned = await h.createUser({ privileges: 1 });
      const cases: Array<[string, string, RegExp]> = [
        [user.username, 'wrong', /Wrong username or password/],
        ['nobody_here', 'x', /Wrong username or password/],
        [legacy.username, legacy.password, /old-style password.*operator.*tokend user passwd/s],
        [banned.username, banned.password, /banned/],
      ];
      for (const [username, password, message] of cases) {
        const browser = new InjectBrowser(h.app);
        const page = await browser.get('/login');
        const r = await browser.post('/login', { _csrf: csrfOf(page.body), username, password });
        assert.equal(r.statusCode, 403, username);
        assert.match(r.body, message);
        assert.match(r.body, /role="alert"/);
        assert.equal(browser.cookies.has('rt'), false);
      }
      assert.equal((await h.store.db.selectFrom('tokens').select('id').execute()).length, 0);
    });

    it('shares the login rate limit with token creation (per user and IP), then answers 429', async (t) => {
      const h = await build(t, dialect);
      const user = await h.createUser();
      for (let i = 0; i < 3; i++)
        await h.api({ method: 'POST', path: '/tokens', payload: { id: user.id, password: 'wrong' } });
      const browser = new InjectBrowser(h.app);
      const page = await browser.get('/login');
      const csrf = csrfOf(page.body);
      const attempt = () =>
        browser.post('/login', { _csrf: csrf, username: user.username, password: 'wrong' });
      assert.equal((await attempt()).statusCode, 403);
      assert.equal((await attempt()).statusCode, 403);
      const limited = await browser.post('/login', {
        _csrf: csrf,
        username: user.username,
        password: user.password,
      });
      assert.equal(limited.statusCode, 429);
      assert.match(limited.headers['retry-after'] as string, /^\d+$/);
      assert.match(limited.body, /Too many sign-in attempts/);
      assert.equal(browser.cookies.has('rt'), false);
    });

    it('refuses a sign-in without the CSRF token', async (t) => {
      const h = await build(t, dialect);
      const user = await h.createUser();
      const browser = new InjectBrowser(h.app);
      await browser.get('/login');
      const r = await browser.post('/login', { username: user.username, password: user.password });
      assert.equal(r.statusCode, 403);
      assert.equal(browser.cookies.has('rt'), false);
    });

    it('follows `next` only to local paths (else the token page)', async (t) => {
      const h = await build(t, dialect, { LOGIN_RATE_LIMIT: '100', LOGIN_IP_RATE_LIMIT: '100' }); // every sign-in counts
      const user = await h.createUser();
      const cases: Array<[string, string]> = [
        ['/oauth/authorize?client_id=x&scope=a%20b', '/oauth/authorize?client_id=x&scope=a%20b'],
        ['//evil.example/x', '/tokens'],
        ['https://evil.example/', '/tokens'],
        ['/\\evil.example', '/tokens'],
        ['javascript:alert(1)', '/tokens'],
        ['/\tevil', '/tokens'],
      ];
      for (const [next, expected] of cases) {
        const browser = new InjectBrowser(h.app);
        const page = await browser.get(`/login?next=${encodeURIComponent(next)}`);
        const r = await browser.post('/login', {
          _csrf: csrfOf(page.body),
          next,
          username: user.username,
          password: user.password,
        });
        assert.equal(r.statusCode, 303, next);
        assert.equal(r.headers.location, expected, next);
      }
    });

    it('signs out with a CSRF-protected POST that deletes the token and clears the cookie', async (t) => {
      const h = await build(t, dialect);
      const user = await h.createUser();
      const browser = new InjectBrowser(h.app);
      await browser.signIn(user);
      const secret = browser.cookies.get('rt') as string;
      const page = await browser.get('/login');

      const forged = await browser.post('/logout', {});
      assert.equal(forged.statusCode, 403);
      assert.equal(
        (await h.api({ method: 'GET', path: '/tokens/self', cookies: { rt: secret } })).statusCode,
        200,
      );

      const r = await browser.post('/logout', { _csrf: csrfOf(page.body) });
      assert.equal(r.statusCode, 303);
      assert.equal(r.headers.location, '/login?signed_out=1');
      const landed = await browser.get(String(r.headers.location));
      assert.match(landed.body, /<p class="notice" role="status">You have signed out\.<\/p>/);
      assert.match(landed.body, /<h1>Sign in to tokend<\/h1>/);
      const cleared = rtCookie(r);
      assert.equal(cleared?.value, '');
      assert.equal(browser.cookies.has('rt'), false);
      assert.equal(
        (await h.api({ method: 'GET', path: '/tokens/self', cookies: { rt: secret } })).statusCode,
        404,
      );
      assert.equal((await h.store.db.selectFrom('tokens').select('id').execute()).length, 0);
    });
    it('focuses the field in error: the empty one, else the password (the username is kept)', async (t) => {
      const h = await build(t, dialect);
      const user = await h.createUser();
      const cases: Array<[string, string, 'username' | 'password']> = [
        ['', 'x', 'username'],
        [user.username, '', 'password'],
        [user.username, 'wrong', 'password'],
        ['x'.repeat(1025), 'x', 'username'],
      ];
      for (const [username, password, field] of cases) {
        const browser = new InjectBrowser(h.app);
        const page = await browser.get('/login');
        const r = await browser.post('/login', { _csrf: csrfOf(page.body), username, password });
        assert.ok(r.statusCode >= 400, `${field}: ${r.statusCode}`);
        const other = field === 'username' ? 'password' : 'username';
        assert.match(
          r.body,
          new RegExp(`id="${field}"[^>]*autofocus aria-invalid="true" aria-describedby="login-error"`, 's'),
          field,
        );
        assert.doesNotMatch(r.body, new RegExp(`id="${other}"[^>]*autofocus`, 's'), field);
        assert.match(r.body, /<p class="error" role="alert" id="login-error">/);
      }
    });

    it('says so on the page that signing out everywhere lands on', async (t) => {
      const h = await build(t, dialect);
      const user = await h.createUser();
      const browser = new InjectBrowser(h.app);
      await browser.signIn(user);
      const page = await browser.get('/tokens/sign-out-everywhere');
      const r = await browser.post('/tokens/sign-out-everywhere', {
        _csrf: csrfOf(page.body),
        confirm: 'yes',
      });
      assert.equal(r.statusCode, 303);
      assert.equal(r.headers.location, '/login?signed_out=everywhere');
      const landed = await browser.get(String(r.headers.location));
      assert.match(
        landed.body,
        /You have signed out everywhere: every session, connected application and API token/,
      );
      // Only the two known notes: any other value says nothing.
      assert.doesNotMatch((await browser.get('/login?signed_out=%3Cb%3E')).body, /class="notice"/);
    });
  });
}
