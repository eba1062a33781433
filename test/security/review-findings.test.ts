// What an attacking review of the privilege boundary found, each replayed: a secret under a percent-encoded
// parameter name, a `next` beyond Latin-1, NUL bytes on PostgreSQL, and SUDO_WINDOW_S=0.
import { describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { DIALECTS } from '../helpers/dialects.ts';
import { build, body } from '../helpers/app.ts';
import { InjectBrowser, csrfOf, form, FORM } from '../helpers/inject-browser.ts';
import { registerClient } from '../helpers/oauth.ts';
import { redactUrl } from '../../src/http/logging.ts';

describe('redactUrl', () => {
  it('redacts a secret parameter however its name is spelt', () => {
    const s = '0123456789abcdef0123456789abcdef';
    for (const name of ['token', '%74oken', 'tok%65n', '%74%6F%6B%65%6E', 'k', '%6B', '%6b', 'TOKEN', 'code'])
      assert.equal(
        redactUrl(`/api/v1/ping?a=1&${name}=${s}#x`),
        `/api/v1/ping?a=1&${name}=[REDACTED]#x`,
        name,
      );
    // A second review: near misses that tokend never reads as credentials still must not log a secret.
    for (const [name, value] of [
      ['token%5B%5D', s],
      ['token[]', s],
      ['k%00', s],
      ['TOKEN%20', s],
      ['x', `1%26token%3D${s}`],
      ['x', `1%26k=${s}`],
    ] as const)
      assert.equal(
        redactUrl(`/api/v1/ping?a=1&${name}=${value}`),
        `/api/v1/ping?a=1&${name}=[REDACTED]`,
        name,
      );
    // Names that only start with a secret's letters are not secrets.
    assert.equal(redactUrl('/x?key=1&kind=2&tokens=3&codes=4'), '/x?key=1&kind=2&tokens=3&codes=4');
    assert.equal(redactUrl('/x?name=value&p=2'), '/x?name=value&p=2');
    assert.equal(redactUrl('/x?%E0%A4%A=1'), '/x?%E0%A4%A=1', 'a name that does not decode stays');
    assert.equal(redactUrl('/no/query'), '/no/query');
  });
});

for (const dialect of DIALECTS) {
  describe(`review findings [${dialect}]`, () => {
    it('a percent-encoded credential name authenticates like the decoded one', async (t) => {
      const h = await build(t, dialect);
      const user = await h.createUser();
      const { secret } = await h.createToken(user.id);
      for (const name of ['%74oken', '%6B']) {
        const r = await h.app.inject({ url: `${h.config.basePath}/v1/tokens/self?${name}=${secret}` });
        assert.equal(r.statusCode, 200, name);
      }
    });

    it('a `next` beyond Latin-1 is followed, percent-encoded, never a 500; no orphan session', async (t) => {
      const h = await build(t, dialect);
      const user = await h.createUser();
      const browser = new InjectBrowser(h.app);
      const page = await browser.get('/login?next=%2F%C4%80');
      assert.equal(page.statusCode, 200);
      const signIn = await browser.post('/login', {
        _csrf: csrfOf(page.body),
        username: user.username,
        password: user.password,
        next: '/Ā😀',
      });
      assert.equal(signIn.statusCode, 303, signIn.body);
      assert.equal(signIn.headers.location, '/%C4%80%F0%9F%98%80');
      const again = await browser.get('/login?next=%2F%C4%80');
      assert.equal(again.statusCode, 303);
      assert.equal(again.headers.location, '/%C4%80');
      const sessions = await h.store.db.selectFrom('tokens').select('id').where('session', '=', 1).execute();
      assert.equal(sessions.length, 1);
    });

    it('NUL in a form field or a client id is a 4xx on every backend', async (t) => {
      const h = await build(t, dialect);
      const user = await h.createUser();
      await registerClient(h, { ownerId: user.id });
      const browser = new InjectBrowser(h.app);
      await browser.signIn(user);
      const csrf = csrfOf((await browser.get('/tokens')).body);
      const made = await browser.post('/tokens', { _csrf: csrf, description: 'a\0b' });
      assert.equal(made.statusCode, 400, made.body);
      assert.match(made.body, /control characters/);
      const revoke = await browser.post('/tokens/applications/a%00b/revoke', { _csrf: csrf });
      assert.equal(revoke.statusCode, 404);
      const authorize = await browser.get(
        '/oauth/authorize?client_id=a%00b&redirect_uri=https%3A%2F%2Fa.example',
      );
      assert.equal(authorize.statusCode, 400);
      for (const path of ['/oauth/token', '/oauth/introspect', '/oauth/revoke']) {
        const r = await h.app.inject({
          method: 'POST',
          url: path,
          headers: FORM,
          payload: form({
            client_id: 'a\0b',
            client_secret: 'x',
            grant_type: 'refresh_token',
            refresh_token: 'r',
            token: 't',
          }),
        });
        assert.ok(r.statusCode >= 400 && r.statusCode < 500, `${path}: ${r.statusCode} ${r.body}`);
        const basic = await h.app.inject({
          method: 'POST',
          url: path,
          headers: { ...FORM, authorization: `Basic ${Buffer.from('a%00b:x').toString('base64')}` },
          payload: form({ grant_type: 'refresh_token', refresh_token: 'r', token: 't' }),
        });
        assert.ok(basic.statusCode >= 400 && basic.statusCode < 500, `${path} (Basic): ${basic.statusCode}`);
      }
    });

    it('without PUBLIC_URL the OAuth metadata, derived from Host, is not publicly cacheable', async (t) => {
      const h = await build(t, dialect);
      const r = await h.app.inject({
        url: '/.well-known/oauth-authorization-server',
        headers: { host: 'a.example' },
      });
      assert.equal(r.json().issuer, 'http://a.example');
      assert.doesNotMatch(String(r.headers['cache-control']), /public/);
      assert.match(String(r.headers.vary), /\bHost\b/);
      const other = await h.app.inject({
        url: '/.well-known/oauth-authorization-server',
        headers: { host: 'b.example' },
      });
      assert.equal(other.json().issuer, 'http://b.example');
    });

    it('SUDO_WINDOW_S=0 asks for the password every time, even right after signing in', async (t) => {
      const h = await build(t, dialect, { SUDO_WINDOW_S: '0' });
      const user = await h.createUser();
      const browser = new InjectBrowser(h.app);
      await browser.signIn(user);
      const page = await browser.get('/tokens');
      assert.match(page.body, /name="confirm_password"/);
      const r = await browser.post('/tokens', { _csrf: csrfOf(page.body), description: 'x' });
      assert.equal(r.statusCode, 403);
      const api = await h.api({ method: 'GET', path: '/tokens', headers: { 'x-ripple-token': 'none' } });
      assert.equal(body(api).code, 401);
    });

    // A second review: the CSRF token was bound to the `_csrf` cookie only, so a `_csrf` cookie and token
    // taken by an attacker from /login and planted in the victim's browser (a sibling subdomain, another
    // port, plain HTTP) passed on the victim's signed-in forms. It is now bound to the session too.
    it("a planted _csrf cookie and its token do not pass on a signed-in user's forms", async (t) => {
      const h = await build(t, dialect);
      const victim = await h.createUser();
      const browser = new InjectBrowser(h.app);
      await browser.signIn(victim);
      const attacker = new InjectBrowser(h.app);
      const attackerToken = csrfOf((await attacker.get('/login')).body);
      const planted = attacker.cookies.get('_csrf');
      assert.ok(planted);
      const count = async () =>
        (
          await h.store.db
            .selectFrom('tokens')
            .select((eb) => eb.fn.countAll<number | string>().as('n'))
            .where('user_id', '=', victim.id)
            .where('session', '=', 0)
            .executeTakeFirstOrThrow()
        ).n;
      const tossed = await h.app.inject({
        method: 'POST',
        url: '/tokens',
        headers: FORM,
        cookies: { rt: browser.cookies.get('rt') ?? '', _csrf: planted },
        payload: form({ _csrf: attackerToken, description: 'planted' }),
      });
      assert.equal(tossed.statusCode, 403, tossed.body);
      assert.equal(Number(await count()), 0);
      // The victim's own form still works, and a token from before sign-in does not pass after it.
      const page = await browser.get('/tokens');
      const own = await browser.post('/tokens', { _csrf: csrfOf(page.body), description: 'mine' });
      assert.equal(own.statusCode, 303, own.body);
      assert.equal(Number(await count()), 1);
      const late = new InjectBrowser(h.app);
      const before = csrfOf((await late.get('/login')).body);
      await late.signIn(victim);
      const stale = await late.post('/tokens', { _csrf: before, description: 'stale' });
      assert.equal(stale.statusCode, 403, stale.body);
    });
  });
}
