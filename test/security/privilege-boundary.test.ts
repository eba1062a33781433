// The privilege boundary: only a web session is a web session, sudo mode, bearer scopes, complete
// revocation, password changes, sign-out everywhere, connected applications and cookie-identified writes.
// Each escalation an attacking review used is replayed here and must create nothing.
import { actOutsideRequest } from '../../src/auth/security-log.ts';
import { describe, it, type TestContext } from 'node:test';
import assert from 'node:assert/strict';
import { DIALECTS } from '../helpers/dialects.ts';
import { build, body, ACTIVE, type Harness, type TestUser } from '../helpers/app.ts';
import { InjectBrowser, csrfOf, hiddenFieldsOf } from '../helpers/inject-browser.ts';
import {
  authorizeUrl,
  backChannel,
  exchangeCode,
  obtainCode,
  pkcePair,
  registerClient,
  type TestClient,
} from '../helpers/oauth.ts';
import { TokenPrivilege, UserPrivilege as U } from '../../src/auth/privileges.ts';
import { nowSeconds } from '../../src/auth/clock.ts';
import { hashTokenSecret } from '../../src/auth/secret.ts';
import { startSession } from '../../src/auth/sessions.ts';
import { buildApp } from '../../src/app.ts';
import { openStore } from '../../src/store/database.ts';
import type { Backend } from '../helpers/dialects.ts';

/** An administrator who may hold ManageUser, ManageAPIKeys and APIMeta. */
const ADMIN =
  ACTIVE |
  U.AdminAccessRAP |
  U.AdminManageUsers |
  U.AdminBanUsers |
  U.AdminManageServer |
  U.AdminManagePrivilege;

async function countTokens(h: Harness, userId: number): Promise<number> {
  const row = await h.store.db
    .selectFrom('tokens')
    .select((eb) => eb.fn.countAll<number>().as('n'))
    .where('user_id', '=', userId)
    .executeTakeFirstOrThrow();
  return Number(row.n);
}

async function apiToken(h: Harness, user: TestUser, privileges = 0, extra: Record<string, unknown> = {}) {
  const r = await h.api({
    method: 'POST',
    path: '/tokens',
    payload: { username: user.username, password: user.password, privileges, ...extra },
  });
  assert.equal(r.statusCode, 200, r.body);
  return body(r).token as string;
}

/** A browser whose `rt` cookie holds `secret` (not made by /login), with a valid CSRF pair. */
/**
 * A browser with `secret` in its rt cookie and a CSRF token made for that cookie (the token is bound to
 * it), so that what refuses its forms is the session rule, not the CSRF check.
 */
async function browserWithCookie(h: Harness, secret: string) {
  const browser = new InjectBrowser(h.app);
  browser.cookies.set('rt', secret);
  const login = await browser.get('/login');
  const csrf = csrfOf(login.body);
  return { browser, csrf };
}

async function ageSession(h: Harness, userId: number, seconds: number) {
  await h.store.db
    .updateTable('tokens')
    .set({ password_at: nowSeconds() - seconds })
    .where('user_id', '=', userId)
    .where('session', '=', 1)
    .execute();
}

/** A bearer pair through the real code flow (consent included). */
async function bearerPair(h: Harness, browser: InjectBrowser, client: TestClient, scope: string) {
  const { verifier, challenge } = pkcePair();
  const code = await obtainCode(browser, { client, challenge, scope });
  const r = await exchangeCode(h, client, code, verifier);
  assert.equal(r.statusCode, 200, r.body);
  return r.json() as { access_token: string; refresh_token: string };
}

const bearer = (token: string) => ({ authorization: `Bearer ${token}` });

/** An app on a fresh database, a signed-in user, and a registered client of another user. */
async function signedInWithClient(t: TestContext, dialect: Backend) {
  const h = await build(t, dialect);
  const user = await h.createUser();
  const owner = await h.createUser();
  const client = await registerClient(h, { ownerId: owner.id });
  const browser = new InjectBrowser(h.app);
  await browser.signIn(user);
  return { h, user, client, browser };
}

for (const dialect of DIALECTS) {
  describe(`web sessions are sessions [${dialect}]`, () => {
    it("an admin's privileges-0 token in rt creates no token on /tokens and is sent to sign in", async (t) => {
      const h = await build(t, dialect);
      const admin = await h.createUser({ privileges: ADMIN });
      const weak = await apiToken(h, admin, 0);
      const before = await countTokens(h, admin.id);
      const { browser, csrf } = await browserWithCookie(h, weak);

      const page = await browser.get('/tokens');
      assert.equal(page.statusCode, 303);
      assert.match(String(page.headers.location), /^\/login\?next=/);
      const made = await browser.request({
        method: 'POST',
        url: '/tokens',
        headers: { 'content-type': 'application/x-www-form-urlencoded' },
        payload: new URLSearchParams([
          ['_csrf', csrf],
          ['description', 'escalated'],
          ['privileges', 'ManageUser'],
          ['privileges', 'ManageAPIKeys'],
          ['privileges', 'APIMeta'],
        ]).toString(),
      });
      assert.equal(made.statusCode, 303, made.body);
      assert.match(String(made.headers.location), /^\/login/);
      assert.equal(await countTokens(h, admin.id), before, 'no token was created');
      const fix = await h.api({
        method: 'POST',
        path: '/tokens/fix_privileges',
        headers: { 'x-ripple-token': weak },
      });
      assert.equal(fix.statusCode, 401);
    });

    it('an expiring token, a bearer token, an ended or expired session in rt sign no one in', async (t) => {
      const h = await build(t, dialect);
      const user = await h.createUser({ privileges: ADMIN });
      const owner = await h.createUser();
      const client = await registerClient(h, { ownerId: owner.id });
      const expiring = await apiToken(h, user, 0, { expires_in: 60 });

      const signedIn = new InjectBrowser(h.app);
      await signedIn.signIn(user);
      const pair = await bearerPair(h, signedIn, client, 'read_confidential');
      const ended = new InjectBrowser(h.app);
      await ended.signIn(user);
      const endedSecret = ended.cookies.get('rt')!;
      const logout = await ended.post('/logout', { _csrf: csrfOf((await ended.get('/login')).body) });
      assert.equal(logout.statusCode, 303);
      const expired = new InjectBrowser(h.app);
      await expired.signIn(user);
      const expiredSecret = expired.cookies.get('rt')!;
      await h.store.db
        .updateTable('tokens')
        .set({ expires_at: nowSeconds() - 1 })
        .where('token_hash', '=', hashTokenSecret(expiredSecret))
        .execute();

      for (const [what, secret] of [
        ['expiring API token', expiring],
        ['bearer token', pair.access_token],
        ['signed-out session', endedSecret],
        ['expired session', expiredSecret],
      ] as const) {
        const { browser, csrf } = await browserWithCookie(h, secret);
        const page = await browser.get('/tokens');
        assert.equal(page.statusCode, 303, `${what}: ${page.body}`);
        const before = await countTokens(h, user.id);
        const made = await browser.post('/tokens', { _csrf: csrf, description: what });
        assert.equal(made.statusCode, 303, `${what}: ${made.body}`);
        assert.equal(await countTokens(h, user.id), before, `${what} created a token`);
        const { challenge } = pkcePair();
        const consent = await browser.get(authorizeUrl({ client, challenge, scope: 'write' }));
        assert.equal(consent.statusCode, 303, what);
        assert.match(String(consent.headers.location), /^\/login\?next=%2Foauth%2Fauthorize/);
      }
    });

    it('an API token in rt cannot approve an application (POST /oauth/authorize gives no code)', async (t) => {
      const h = await build(t, dialect);
      const admin = await h.createUser({ privileges: ADMIN });
      const owner = await h.createUser();
      const client = await registerClient(h, { ownerId: owner.id });
      const weak = await apiToken(h, admin, 0);
      // A real consent form, as the victim's own session would see it, replayed with the token as cookie.
      const real = new InjectBrowser(h.app);
      await real.signIn(admin);
      const { challenge } = pkcePair();
      const page = await real.get(
        authorizeUrl({ client, challenge, scope: 'read_confidential write bancho' }),
      );
      assert.equal(page.statusCode, 200);
      const fields = hiddenFieldsOf(page.body);
      real.cookies.set('rt', weak);
      // With a CSRF token made for the swapped cookie (the form's own is bound to the session), so that
      // what refuses it is the session rule.
      const csrf = csrfOf((await real.get('/login')).body);
      const answer = await real.post('/oauth/authorize', { ...fields, _csrf: csrf, decision: 'allow' });
      assert.equal(answer.statusCode, 303);
      assert.match(String(answer.headers.location), /^\/login/);
      const codes = await h.store.db.selectFrom('oauth_codes').selectAll().execute();
      assert.equal(codes.length, 0, 'no authorization code was issued');
    });

    it('a session has no API privileges, expires after 30 days, and at most 100 live per user', async (t) => {
      const h = await build(t, dialect);
      const admin = await h.createUser({ privileges: ADMIN });
      const browser = new InjectBrowser(h.app);
      await browser.signIn(admin);
      const self = await h.api({
        method: 'GET',
        path: '/tokens/self',
        headers: { 'x-ripple-token': browser.cookies.get('rt')! },
      });
      assert.equal(body(self).privileges, 0);
      const row = await h.store.db
        .selectFrom('tokens')
        .select(['expires_at', 'privileges', 'private'])
        .where('session', '=', 1)
        .executeTakeFirstOrThrow();
      assert.equal(row.privileges, 0);
      assert.equal(row.private, 1);
      const ttl = Number(row.expires_at) - nowSeconds();
      assert.ok(ttl > 30 * 86_400 - 60 && ttl <= 30 * 86_400, String(ttl));

      // 101 more sign-ins, straight through the session module (the login limiter would stop a loop of /login).
      const stored = await h.store.db
        .selectFrom('users')
        .select(['id', 'password_hash'])
        .where('id', '=', admin.id)
        .executeTakeFirstOrThrow();
      for (let i = 0; i < 101; i++)
        await startSession(h.store.db, stored, actOutsideRequest('web', nowSeconds()));
      const live = await h.store.db
        .selectFrom('tokens')
        .select('id')
        .where('user_id', '=', admin.id)
        .where('session', '=', 1)
        .execute();
      assert.equal(live.length, 100);
      assert.equal((await browser.get('/tokens')).statusCode, 303, 'the oldest session was ended');
    });
  });

  describe(`sudo mode [${dialect}]`, () => {
    it('creating a token needs the password again after SUDO_WINDOW_S; a wrong one creates nothing', async (t) => {
      const h = await build(t, dialect, { SUDO_WINDOW_S: '900' });
      const user = await h.createUser();
      const browser = new InjectBrowser(h.app);
      await browser.signIn(user);
      const fresh = await browser.get('/tokens');
      assert.doesNotMatch(fresh.body, /name="confirm_password"/, 'fresh sessions are in sudo mode');
      await ageSession(h, user.id, 901);
      const page = await browser.get('/tokens');
      assert.match(page.body, /name="confirm_password"/);
      const csrf = csrfOf(page.body);
      const before = await countTokens(h, user.id);

      const none = await browser.post('/tokens', { _csrf: csrf, description: 'a' });
      assert.equal(none.statusCode, 403);
      assert.match(none.body, /Enter your password/);
      const wrong = await browser.post('/tokens', {
        _csrf: csrf,
        description: 'a',
        confirm_password: 'nope',
      });
      assert.equal(wrong.statusCode, 403);
      assert.match(wrong.body, /not right/);
      assert.equal(await countTokens(h, user.id), before);

      const right = await browser.post('/tokens', {
        _csrf: csrf,
        description: 'a',
        confirm_password: user.password,
      });
      assert.equal(right.statusCode, 303, right.body);
      assert.match((await browser.get(String(right.headers.location))).body, /id="new-token"/);
      const again = await browser.post('/tokens', { _csrf: csrf, description: 'b' });
      assert.equal(again.statusCode, 303, 'the password entry renewed sudo mode');
      assert.equal(await countTokens(h, user.id), before + 2);
    });

    it('wrong confirmation passwords count against the login limit (429 with Retry-After)', async (t) => {
      const h = await build(t, dialect, { SUDO_WINDOW_S: '0', LOGIN_RATE_LIMIT: '3' });
      const user = await h.createUser();
      const browser = new InjectBrowser(h.app);
      await browser.signIn(user); // attempt 1
      await ageSession(h, user.id, 5);
      const csrf = csrfOf((await browser.get('/tokens')).body);
      for (let i = 0; i < 2; i++)
        assert.equal((await browser.post('/tokens', { _csrf: csrf, confirm_password: 'x' })).statusCode, 403);
      const limited = await browser.post('/tokens', { _csrf: csrf, confirm_password: user.password });
      assert.equal(limited.statusCode, 429);
      assert.ok(Number(limited.headers['retry-after']) > 0);
    });

    it('approving an application needs the password again; the answer then carries a code', async (t) => {
      const { h, user, client, browser } = await signedInWithClient(t, dialect);
      await ageSession(h, user.id, 3600);
      const { challenge } = pkcePair();
      const page = await browser.get(authorizeUrl({ client, challenge, scope: 'write' }));
      assert.equal(page.statusCode, 200);
      assert.match(page.body, /name="confirm_password"/);
      const fields = hiddenFieldsOf(page.body);
      const refused = await browser.post('/oauth/authorize', { ...fields, decision: 'allow' });
      assert.equal(refused.statusCode, 403);
      assert.match(refused.body, /Enter your password/);
      assert.equal((await h.store.db.selectFrom('oauth_codes').selectAll().execute()).length, 0);
      const wrong = await browser.post('/oauth/authorize', {
        ...fields,
        decision: 'allow',
        confirm_password: 'bad',
      });
      assert.equal(wrong.statusCode, 403);
      const ok = await browser.post('/oauth/authorize', {
        ...fields,
        decision: 'allow',
        confirm_password: user.password,
      });
      assert.equal(ok.statusCode, 303, ok.body);
      assert.ok(new URL(String(ok.headers.location)).searchParams.get('code'));
    });
  });

  describe(`bearer scopes [${dialect}]`, () => {
    it('listing needs read_confidential; revoking by id is never allowed; self read and delete are', async (t) => {
      const { h, user, client, browser } = await signedInWithClient(t, dialect);
      const victim = await apiToken(h, user, 0);
      const victimId = body(
        await h.api({ method: 'GET', path: '/tokens/self', headers: { 'x-ripple-token': victim } }),
      ).id;

      const narrow = await bearerPair(h, browser, client, 'write');
      const list = await h.api({ method: 'GET', path: '/tokens', headers: bearer(narrow.access_token) });
      assert.equal(list.statusCode, 401);
      assert.match(String(body(list).message), /read_confidential/);

      for (const [method, path] of [
        ['POST', `/tokens/${victimId}/delete`],
        ['DELETE', `/tokens/${victimId}`],
      ] as const) {
        const r = await h.api({ method, path, headers: bearer(narrow.access_token) });
        assert.equal(r.statusCode, 401, `${method} ${path}: ${r.body}`);
      }
      const still = await h.api({
        method: 'GET',
        path: '/tokens/self',
        headers: { 'x-ripple-token': victim },
      });
      assert.equal(still.statusCode, 200, 'the token survived');

      const wide = await bearerPair(h, browser, client, 'read_confidential write');
      const listed = await h.api({ method: 'GET', path: '/tokens', headers: bearer(wide.access_token) });
      assert.equal(listed.statusCode, 200, listed.body);
      assert.deepEqual(
        (body(listed).tokens as Array<{ id: number }>).map((x) => x.id),
        [victimId],
      );
      const self = await h.api({ method: 'GET', path: '/tokens/self', headers: bearer(narrow.access_token) });
      assert.equal(self.statusCode, 200);
      assert.equal(body(self).scope, 'write');
    });

    it('deleting a bearer through /tokens/self also revokes its refresh token', async (t) => {
      const { h, client, browser } = await signedInWithClient(t, dialect);
      const pair = await bearerPair(h, browser, client, 'write');
      const del = await h.api({
        method: 'POST',
        path: '/tokens/self/delete',
        headers: bearer(pair.access_token),
      });
      assert.equal(del.statusCode, 200);
      const refresh = await backChannel(h, '/oauth/token', client, {
        grant_type: 'refresh_token',
        refresh_token: pair.refresh_token,
      });
      assert.equal(refresh.statusCode, 400);
      assert.equal(refresh.json().error, 'invalid_grant');
      const gone = await h.api({ method: 'GET', path: '/tokens/self', headers: bearer(pair.access_token) });
      assert.equal(gone.statusCode, 404);
    });
  });

  describe(`OAuth revocation [${dialect}]`, () => {
    it("a banned owner's refresh is refused and introspection answers inactive", async (t) => {
      const { h, user, client, browser } = await signedInWithClient(t, dialect);
      const pair = await bearerPair(h, browser, client, 'write');
      const active = await backChannel(h, '/oauth/introspect', client, { token: pair.access_token });
      assert.equal(active.json().active, true);
      await h.setUserPrivileges(user.id, 1); // lacks UserNormal: banned
      for (const token of [pair.access_token, pair.refresh_token]) {
        const r = await backChannel(h, '/oauth/introspect', client, { token });
        assert.deepEqual(r.json(), { active: false });
      }
      const refresh = await backChannel(h, '/oauth/token', client, {
        grant_type: 'refresh_token',
        refresh_token: pair.refresh_token,
      });
      assert.equal(refresh.statusCode, 400);
      assert.equal(refresh.json().error, 'invalid_grant');
    });

    it("a restricted user's access token keeps its scope, as their API tokens do; their refresh is refused as creation is", async (t) => {
      const { h, user, client, browser } = await signedInWithClient(t, dialect);
      const pair = await bearerPair(h, browser, client, 'write');
      await h.setUserPrivileges(user.id, 2); // UserNormal without UserPublic: restricted
      const ping = await h.api({ method: 'GET', path: '/ping', headers: bearer(pair.access_token) });
      assert.equal(ping.json().privileges, 4, ping.body);
      const access = await backChannel(h, '/oauth/introspect', client, { token: pair.access_token });
      assert.deepEqual([access.json().active, access.json().privileges], [true, 4]);
      const refresh = await backChannel(h, '/oauth/introspect', client, { token: pair.refresh_token });
      assert.deepEqual(refresh.json(), { active: false });
      const refreshed = await backChannel(h, '/oauth/token', client, {
        grant_type: 'refresh_token',
        refresh_token: pair.refresh_token,
      });
      assert.equal(refreshed.statusCode, 400);
      assert.equal(refreshed.json().error, 'invalid_grant');
    });

    it("a used code presented by another client is refused without revoking the first client's grant", async (t) => {
      const h = await build(t, dialect);
      const user = await h.createUser();
      const owner = await h.createUser();
      const victim = await registerClient(h, { ownerId: owner.id, name: 'Victim' });
      const other = await registerClient(h, { ownerId: owner.id, name: 'Other' });
      const browser = new InjectBrowser(h.app);
      await browser.signIn(user);
      const { verifier, challenge } = pkcePair();
      const code = await obtainCode(browser, { client: victim, challenge, scope: 'write' });
      const first = await exchangeCode(h, victim, code, verifier);
      assert.equal(first.statusCode, 200);
      const stolen = await exchangeCode(h, other, code, verifier);
      assert.equal(stolen.statusCode, 400);
      assert.equal(stolen.json().error, 'invalid_grant');
      const access = (first.json() as { access_token: string }).access_token;
      const still = await h.api({ method: 'GET', path: '/tokens/self', headers: bearer(access) });
      assert.equal(still.statusCode, 200, "the victim's grant survived");
      // The rule itself stands: the victim presenting its own code again revokes its grant.
      const replay = await exchangeCode(h, victim, code, verifier);
      assert.equal(replay.json().error, 'invalid_grant');
      const dead = await h.api({ method: 'GET', path: '/tokens/self', headers: bearer(access) });
      assert.equal(dead.statusCode, 404);
    });
  });

  describe(`sign out everywhere and connected applications [${dialect}]`, () => {
    it('the button (confirmation, sudo mode) ends sessions, grants and API tokens on every instance', async (t) => {
      const h = await build(t, dialect);
      const other = await buildApp(h.config, {
        store: await openStore(h.database.config, { migrate: false }),
      });
      t.after(() => other.close());
      const user = await h.createUser();
      const bystander = await h.createUser();
      const owner = await h.createUser();
      const client = await registerClient(h, { ownerId: owner.id });
      const browser = new InjectBrowser(h.app);
      await browser.signIn(user);
      const second = new InjectBrowser(other);
      await second.signIn(user);
      const api = await apiToken(h, user, 0);
      const kept = await apiToken(h, bystander, 0);
      const pair = await bearerPair(h, browser, client, 'write');

      const confirm = await browser.get('/tokens/sign-out-everywhere');
      assert.equal(confirm.statusCode, 200);
      const csrf = csrfOf(confirm.body);
      const unconfirmed = await browser.post('/tokens/sign-out-everywhere', { _csrf: csrf });
      assert.equal(unconfirmed.statusCode, 400);
      await ageSession(h, user.id, 3600);
      const noPassword = await browser.post('/tokens/sign-out-everywhere', { _csrf: csrf, confirm: 'yes' });
      assert.equal(noPassword.statusCode, 403);
      assert.equal(
        (await h.api({ method: 'GET', path: '/tokens/self', headers: { 'x-ripple-token': api } })).statusCode,
        200,
      );

      const done = await browser.post('/tokens/sign-out-everywhere', {
        _csrf: csrf,
        confirm: 'yes',
        confirm_password: user.password,
      });
      assert.equal(done.statusCode, 303, done.body);
      assert.match(String(done.headers.location), /^\/login/);
      for (const app of [h.app, other]) {
        const self = (headers: Record<string, string>) =>
          app.inject({ method: 'GET', url: `${h.config.basePath}/v1/tokens/self`, headers });
        assert.equal((await self({ 'x-ripple-token': api })).statusCode, 404, 'API token');
        assert.equal((await self(bearer(pair.access_token))).statusCode, 404, 'bearer token');
        assert.equal((await self({ 'x-ripple-token': kept })).statusCode, 200, "another user's token");
        assert.equal(
          (await app.inject({ url: '/tokens', cookies: { rt: second.cookies.get('rt')! } })).statusCode,
          303,
        );
      }
      const refresh = await backChannel(h, '/oauth/token', client, {
        grant_type: 'refresh_token',
        refresh_token: pair.refresh_token,
      });
      assert.equal(refresh.json().error, 'invalid_grant');
      assert.equal(await countTokens(h, user.id), 0);
    });

    it('lists approved applications with scopes and use; revoking one ends its tokens', async (t) => {
      const h = await build(t, dialect);
      const user = await h.createUser();
      const owner = await h.createUser();
      const client = await registerClient(h, {
        ownerId: owner.id,
        name: 'Score Tracker',
        avatar: 'https://tracker.example/a.png',
      });
      const browser = new InjectBrowser(h.app);
      await browser.signIn(user);
      const empty = await browser.get('/tokens');
      assert.match(empty.body, /No application can act for your account/);
      const pair = await bearerPair(h, browser, client, 'read_confidential write');
      const page = await browser.get('/tokens');
      assert.match(page.body, /Score Tracker/);
      assert.match(page.body, /read private information and list your tokens, make changes/);
      assert.match(page.body, /Approved <time/);
      assert.match(page.body, /Last used <time/);
      assert.match(page.body, /src="https:\/\/tracker.example\/a.png"/);
      const revoke = await browser.post(`/tokens/applications/${client.id}/revoke`, {
        _csrf: csrfOf(page.body),
      });
      assert.equal(revoke.statusCode, 303);
      assert.equal(
        (await h.api({ method: 'GET', path: '/tokens/self', headers: bearer(pair.access_token) })).statusCode,
        404,
      );
      const refresh = await backChannel(h, '/oauth/token', client, {
        grant_type: 'refresh_token',
        refresh_token: pair.refresh_token,
      });
      assert.equal(refresh.json().error, 'invalid_grant');
      const after = await browser.get('/tokens?disconnected=1');
      assert.doesNotMatch(after.body, /Score Tracker/);
      // Consent is asked again: the approval went too.
      const { challenge } = pkcePair();
      assert.equal((await browser.get(authorizeUrl({ client, challenge, scope: 'write' }))).statusCode, 200);
      const again = await browser.post(`/tokens/applications/${client.id}/revoke`, {
        _csrf: csrfOf(after.body),
      });
      assert.equal(again.statusCode, 404);
    });
  });

  describe(`API writes through the cookie [${dialect}]`, () => {
    it('need an Origin (or Referer) of this server; header credentials are unaffected', async (t) => {
      const h = await build(t, dialect);
      const user = await h.createUser();
      // Write: revoking another token by id needs it.
      const secret = await apiToken(h, user, TokenPrivilege.Write);
      const other = await apiToken(h, user, 0);
      const otherId = body(
        await h.api({ method: 'GET', path: '/tokens/self', headers: { 'x-ripple-token': other } }),
      ).id;
      const cookie = { rt: secret };
      const alive = async () =>
        (await h.api({ method: 'GET', path: '/tokens/self', headers: { 'x-ripple-token': secret } }))
          .statusCode === 200;

      for (const headers of [
        {},
        { origin: 'https://evil.example' },
        { origin: 'null' },
        { origin: 'http://localhost:8081' },
        { origin: 'https://localhost' },
        { referer: 'https://evil.example/http://localhost/' },
        { origin: 'https://evil.example', referer: 'http://localhost/tokens' },
      ]) {
        for (const [method, path] of [
          ['POST', '/tokens/self/delete'],
          ['DELETE', '/tokens/self'],
          ['DELETE', `/tokens/${otherId}`],
          ['POST', '/tokens/fix_privileges'],
        ] as const) {
          const r = await h.api({ method, path, cookies: cookie, headers });
          assert.equal(r.statusCode, 403, `${method} ${path} ${JSON.stringify(headers)}: ${r.body}`);
          assert.equal(body(r).code, 403);
        }
        assert.ok(await alive(), `nothing was deleted with ${JSON.stringify(headers)}`);
      }
      // Reads through the cookie still work from anywhere (JSONP excepted, as before).
      assert.equal(
        (
          await h.api({
            method: 'GET',
            path: '/tokens',
            cookies: cookie,
            headers: { origin: 'https://evil.example' },
          })
        ).statusCode,
        200,
      );
      // A header credential is not bound to an origin.
      const byHeader = await h.api({
        method: 'DELETE',
        path: `/tokens/${otherId}`,
        headers: { 'x-ripple-token': secret, origin: 'https://evil.example' },
      });
      assert.equal(byHeader.statusCode, 200);
      // From this server's own page: allowed (Origin, or Referer without Origin).
      const own = await h.api({
        method: 'POST',
        path: '/tokens/self/delete',
        cookies: cookie,
        headers: { referer: 'http://localhost/tokens' },
      });
      assert.equal(own.statusCode, 200, own.body);
      assert.equal(await alive(), false);
    });

    it('PUBLIC_URL names the origin that counts', async (t) => {
      const h = await build(t, dialect, { PUBLIC_URL: 'https://tokens.example' });
      const user = await h.createUser();
      const secret = await apiToken(h, user, 0);
      const local = await h.api({
        method: 'DELETE',
        path: '/tokens/self',
        cookies: { rt: secret },
        headers: { origin: 'http://localhost' },
      });
      assert.equal(local.statusCode, 403);
      const pub = await h.api({
        method: 'DELETE',
        path: '/tokens/self',
        cookies: { rt: secret },
        headers: { origin: 'https://tokens.example' },
      });
      assert.equal(pub.statusCode, 200);
      const meta = await h.app.inject({ url: '/.well-known/oauth-authorization-server' });
      assert.equal(meta.json().issuer, 'https://tokens.example');
      assert.equal(meta.json().token_endpoint, 'https://tokens.example/oauth/token');
    });
  });
}
