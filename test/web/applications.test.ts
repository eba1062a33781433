// "Your applications" (/applications) through a cookie-keeping browser over app.inject: registering an
// application (its secret shown once), changing it, a new secret (the old one refused at once, on a
// second instance too), deletion (every token, code and approval ends), the authorized users, the
// per-user maximum and duplicate names, a banned owner, and the attacks: another user's application by
// id, CSRF, sudo mode, exact redirect URIs after a change, hostile names and avatars.
import { describe, it } from 'node:test';
import { Writable } from 'node:stream';
import assert from 'node:assert/strict';
import { DIALECTS } from '../helpers/dialects.ts';
import { build, type Harness, type TestUser } from '../helpers/app.ts';
import { InjectBrowser, csrfOf, leaveSudoMode, signedInUser } from '../helpers/inject-browser.ts';
import {
  REDIRECT_URI,
  authorizeUrl,
  backChannel,
  exchangeCode,
  obtainCode,
  obtainTokens,
  pkcePair,
  refreshTokens,
  type TestClient,
} from '../helpers/oauth.ts';
import { loadConfig } from '../../src/config.ts';
import { buildApp } from '../../src/app.ts';
import { loggerOptions } from '../../src/http/logging.ts';
import { openStore } from '../../src/store/database.ts';
import { TokenPrivilege } from '../../src/auth/privileges.ts';

/** Posts the registration form as a browser fills it in. */
async function register(
  browser: InjectBrowser,
  fields: { name: string; redirect_uris?: string; type?: string; avatar?: string; confirm_password?: string },
) {
  const page = await browser.get('/applications/new');
  assert.equal(page.statusCode, 200, page.body);
  const answer = await browser.post('/applications/new', {
    _csrf: csrfOf(page.body),
    redirect_uris: REDIRECT_URI,
    type: 'confidential',
    ...fields,
  });
  if (answer.statusCode === 303)
    assert.match(
      String(answer.headers.location),
      /^\/applications\/[^/?]+\?registered=1$/,
      'a 303 to its page',
    );
  return landed(browser, answer);
}

/** A form's answer as the browser ends on it: a 303 is followed to the page it leads to. */
async function landed(browser: InjectBrowser, answer: Awaited<ReturnType<InjectBrowser['post']>>) {
  return answer.statusCode === 303 ? browser.get(String(answer.headers.location)) : answer;
}

/** The secret a page shows once, if it shows one. */
const secretOf = (html: string): string | undefined =>
  /id="client-secret"[^>]*value="([A-Za-z0-9_-]{43})"/s.exec(html)?.[1];

async function clientsOf(h: Harness, ownerId: number) {
  return h.store.db
    .selectFrom('oauth_clients')
    .selectAll()
    .where('owner_id', '=', ownerId)
    .orderBy('created_at')
    .orderBy('id')
    .execute();
}

/** Registers a confidential application on the page; its client as the OAuth helpers take it. */
async function registered(h: Harness, browser: InjectBrowser, owner: TestUser, name = 'Score Tracker') {
  const r = await register(browser, { name });
  assert.equal(r.statusCode, 200, r.body);
  const secret = secretOf(r.body);
  assert.ok(secret, 'the new secret is on the page');
  const rows = await clientsOf(h, owner.id);
  const row = rows.find((c) => c.name === name);
  assert.ok(row);
  return { id: row.id, secret, redirectUri: REDIRECT_URI } satisfies TestClient;
}

const bearerSelf = (h: Harness, accessToken: string) =>
  h.api({ method: 'GET', path: '/tokens/self', headers: { authorization: `Bearer ${accessToken}` } });

const clientToken = (h: Harness, client: TestClient, refreshToken: string) =>
  refreshTokens(h, client, refreshToken);

for (const dialect of DIALECTS) {
  describe(`your applications [${dialect}]`, () => {
    it('registers a confidential application: the secret is shown once, works at /oauth/token, and is never shown again', async (t) => {
      const h = await build(t, dialect);
      const { user: owner, browser } = await signedInUser(h);

      const tokensPage = await browser.get('/tokens');
      assert.match(tokensPage.body, /href="\/applications"/);
      const empty = await browser.get('/applications');
      assert.equal(empty.statusCode, 200);
      assert.match(empty.body, /You have not registered an application yet/);
      // Where a developer starts: the endpoints, the metadata, the API reference and the guide.
      for (const page of [empty.body]) {
        assert.match(page, /<h2 id="developers-title">For developers<\/h2>/);
        assert.match(page, /<code>http:\/\/localhost\/oauth\/authorize<\/code>/);
        assert.match(page, /<code>http:\/\/localhost\/oauth\/token<\/code>/);
        assert.match(page, /href="\/\.well-known\/openid-configuration"/);
        assert.match(page, /docs\/oauth\.md/);
        const reference = /<a href="([^"]+)">The API's routes/.exec(page)?.[1];
        assert.ok(reference, 'links the API reference');
        assert.equal((await browser.get(reference)).statusCode, 200, reference);
      }
      assert.match(empty.body, /href="\/applications\/new"/);

      const r = await register(browser, {
        name: '  Score Tracker ',
        redirect_uris: `${REDIRECT_URI}\r\n\r\nhttps://app.example/second\n`,
        avatar: 'https://cdn.example/icon.png',
      });
      assert.equal(r.statusCode, 200, r.body);
      assert.equal(r.headers['cache-control'], 'no-store');
      const secret = secretOf(r.body);
      assert.ok(secret);
      assert.match(r.body, /data-copy="client-secret"/);
      const [row] = await clientsOf(h, owner.id);
      assert.ok(row);
      assert.equal(row.name, 'Score Tracker');
      assert.deepEqual(JSON.parse(row.redirect_uris), [REDIRECT_URI, 'https://app.example/second']);
      assert.equal(row.avatar, 'https://cdn.example/icon.png');
      assert.notEqual(row.secret_hash, null);
      assert.ok(!JSON.stringify(row).includes(secret), 'the database keeps only its hash');
      assert.match(r.body, new RegExp(row.id));

      // A reload of the page it landed on shows it no more, and registers nothing again.
      const reload = await browser.get(`/applications/${row.id}?registered=1`);
      assert.equal(secretOf(reload.body), undefined);
      assert.match(reload.body, /shown once already/);
      assert.equal((await clientsOf(h, owner.id)).length, 1);
      // Never again: neither the application's page nor the list shows it.
      for (const page of [await browser.get(`/applications/${row.id}`), await browser.get('/applications')]) {
        assert.equal(page.statusCode, 200);
        assert.ok(!page.body.includes(secret));
        assert.equal(secretOf(page.body), undefined);
        assert.match(page.body, /Score Tracker/);
      }

      // It works: a user authorizes it, and its secret exchanges the code.
      const { browser: userBrowser } = await signedInUser(h);
      const client: TestClient = { id: row.id, secret, redirectUri: REDIRECT_URI };
      const tokens = await obtainTokens(h, userBrowser, client, 'read_confidential');
      const self = await bearerSelf(h, tokens.access_token);
      assert.equal(self.statusCode, 200);
      assert.equal((self.json() as { privileges: number }).privileges, TokenPrivilege.ReadConfidential);
      const page = await browser.get(`/applications/${row.id}`);
      assert.match(page.body, /1 user has authorized it/);
      assert.match((await browser.get('/applications')).body, /1 user has authorized it/);
      assert.match(
        page.body,
        /<h2 id="developers-title">For developers<\/h2>/,
        "on the application's page too",
      );
    });

    it('registers a public application: no secret, PKCE alone', async (t) => {
      const h = await build(t, dialect);
      const { user: owner, browser } = await signedInUser(h);
      const r = await register(browser, { name: 'Native', type: 'public' });
      assert.equal(r.statusCode, 200, r.body);
      assert.equal(secretOf(r.body), undefined);
      assert.doesNotMatch(r.body, /New client secret/);
      const [row] = await clientsOf(h, owner.id);
      assert.equal(row?.secret_hash, null);
      const { browser: userBrowser } = await signedInUser(h);
      const tokens = await obtainTokens(h, userBrowser, {
        id: row!.id,
        secret: undefined,
        redirectUri: REDIRECT_URI,
      });
      assert.equal((await bearerSelf(h, tokens.access_token)).statusCode, 200);
      // A public application has no secret to replace.
      assert.equal((await browser.get(`/applications/${row!.id}/secret`)).statusCode, 404);
    });

    it('changes name, redirect URIs and avatar; the redirect URIs stay exact-match', async (t) => {
      const h = await build(t, dialect);
      const { user: owner, browser } = await signedInUser(h);
      const client = await registered(h, browser, owner);
      const page = await browser.get(`/applications/${client.id}`);
      const saved = await browser.post(`/applications/${client.id}`, {
        _csrf: csrfOf(page.body),
        name: 'Score Tracker 2',
        redirect_uris: 'https://new.example/cb',
        avatar: 'https://cdn.example/new.png',
      });
      assert.equal(saved.statusCode, 303, saved.body);
      assert.equal(saved.headers.location, `/applications/${client.id}?saved=1`);
      const after = await browser.get(saved.headers.location as string);
      assert.match(after.body, /Your changes are saved/);
      assert.match(after.body, /Score Tracker 2/);
      const [row] = await clientsOf(h, owner.id);
      assert.deepEqual(JSON.parse(row!.redirect_uris), ['https://new.example/cb']);
      assert.equal(row!.avatar, 'https://cdn.example/new.png');

      const { browser: userBrowser } = await signedInUser(h);
      const { challenge } = pkcePair();
      const moved = { ...client, redirectUri: 'https://new.example/cb' };
      // The old URI, and every near miss of the new one, is refused on a page (never redirected to).
      for (const redirectUri of [
        REDIRECT_URI,
        'https://new.example/cb/',
        'https://new.example/cb?x=1',
        'https://NEW.example/cb',
        'https://new.example/cb/../cb',
        'http://new.example/cb',
      ]) {
        const r = await userBrowser.get(authorizeUrl({ client: moved, challenge, redirectUri }));
        assert.equal(r.statusCode, 400, redirectUri);
        assert.equal(r.headers.location, undefined);
        assert.match(r.body, /redirect_uri is not registered/);
      }
      assert.equal((await userBrowser.get(authorizeUrl({ client: moved, challenge }))).statusCode, 200);
    });

    it('a new secret: the old one is refused at once, on a second instance of the same database too; tokens stay unless ended', async (t) => {
      const h = await build(t, dialect);
      // A second instance on the same database.
      const config = loadConfig({ LOG_LEVEL: 'silent', BCRYPT_COST: '4' });
      config.database = h.database.config;
      const second: Harness = {
        ...h,
        app: await buildApp(config, { store: await openStore(h.database.config) }),
      };
      t.after(() => second.app.close());
      await second.app.ready();

      const { user: owner, browser } = await signedInUser(h);
      const client = await registered(h, browser, owner);
      const { browser: userBrowser } = await signedInUser(h);
      const tokens = await obtainTokens(h, userBrowser, client);
      // Both instances know the old secret before.
      const before = await clientToken(second, client, tokens.refresh_token);
      assert.equal(before.statusCode, 200, before.body);
      const fresh = before.json() as { access_token: string; refresh_token: string };

      const confirm = await browser.get(`/applications/${client.id}/secret`);
      assert.equal(confirm.statusCode, 200);
      assert.match(confirm.body, /name="end_tokens"/);
      const rotated = await landed(
        browser,
        await browser.post(`/applications/${client.id}/secret`, { _csrf: csrfOf(confirm.body) }),
      );
      assert.equal(rotated.statusCode, 200, rotated.body);
      const newSecret = secretOf(rotated.body);
      assert.ok(newSecret);
      assert.notEqual(newSecret, client.secret);
      assert.ok(!(await browser.get(`/applications/${client.id}`)).body.includes(newSecret));

      for (const instance of [h, second]) {
        const old = await clientToken(instance, client, fresh.refresh_token);
        assert.equal(old.statusCode, 401, old.body);
        assert.equal((old.json() as { error: string }).error, 'invalid_client');
      }
      // Without "end its tokens" the grant lives on: the access token works, the new secret refreshes.
      assert.equal((await bearerSelf(second, fresh.access_token)).statusCode, 200);
      const renewed = await clientToken(second, { ...client, secret: newSecret }, fresh.refresh_token);
      assert.equal(renewed.statusCode, 200, renewed.body);
    });

    it('a new secret that also ends every token: access and refresh tokens and codes stop, approvals stay', async (t) => {
      const h = await build(t, dialect);
      const { user: owner, browser } = await signedInUser(h);
      const client = await registered(h, browser, owner);
      const { browser: userBrowser } = await signedInUser(h);
      const tokens = await obtainTokens(h, userBrowser, client);
      const { verifier, challenge } = pkcePair();
      const pendingCode = await obtainCode(userBrowser, { client, challenge, scope: 'read_confidential' });

      const confirm = await browser.get(`/applications/${client.id}/secret`);
      const rotated = await landed(
        browser,
        await browser.post(`/applications/${client.id}/secret`, {
          _csrf: csrfOf(confirm.body),
          end_tokens: 'yes',
        }),
      );
      assert.equal(rotated.statusCode, 200, rotated.body);
      const secret = secretOf(rotated.body);
      assert.ok(secret);
      const renewed = { ...client, secret };
      assert.equal((await bearerSelf(h, tokens.access_token)).statusCode, 404);
      assert.equal((await clientToken(h, renewed, tokens.refresh_token)).statusCode, 400);
      assert.equal((await exchangeCode(h, renewed, pendingCode, verifier)).statusCode, 400);
      // The approval stays: the user's browser is sent straight back with a new code.
      const again = await obtainTokens(h, userBrowser, renewed);
      assert.equal((await bearerSelf(h, again.access_token)).statusCode, 200);
      assert.match((await browser.get(`/applications/${client.id}`)).body, /1 user has authorized it/);
    });

    it('deletes an application: every token, code and approval ends at once', async (t) => {
      const h = await build(t, dialect);
      const { user: owner, browser } = await signedInUser(h);
      const client = await registered(h, browser, owner);
      const keep = await registered(h, browser, owner, 'Other App');
      const { browser: userBrowser } = await signedInUser(h);
      const tokens = await obtainTokens(h, userBrowser, client);
      const kept = await obtainTokens(h, userBrowser, keep);
      const { verifier, challenge } = pkcePair();
      const code = await obtainCode(userBrowser, { client, challenge, scope: 'read_confidential' });

      const confirm = await browser.get(`/applications/${client.id}/delete`);
      assert.equal(confirm.statusCode, 200);
      assert.match(confirm.body, /Delete Score Tracker\?/);
      const deleted = await browser.post(`/applications/${client.id}/delete`, {
        _csrf: csrfOf(confirm.body),
      });
      assert.equal(deleted.statusCode, 303, deleted.body);
      assert.equal(deleted.headers.location, '/applications?deleted=1');
      assert.match((await browser.get('/applications?deleted=1')).body, /The application was deleted/);

      assert.equal((await bearerSelf(h, tokens.access_token)).statusCode, 404);
      assert.equal((await clientToken(h, client, tokens.refresh_token)).statusCode, 401);
      assert.equal((await exchangeCode(h, client, code, verifier)).statusCode, 401);
      for (const table of [
        'oauth_consents',
        'oauth_access_tokens',
        'oauth_refresh_tokens',
        'oauth_codes',
      ] as const) {
        const left = await h.store.db
          .selectFrom(table)
          .select('client_id')
          .where('client_id', '=', client.id)
          .execute();
        assert.equal(left.length, 0, table);
      }
      assert.equal((await browser.get(`/applications/${client.id}`)).statusCode, 404);
      // The owner's other application is untouched.
      assert.equal((await bearerSelf(h, kept.access_token)).statusCode, 200);
    });

    it('counts the users who authorized each application', async (t) => {
      const h = await build(t, dialect);
      const { user: owner, browser } = await signedInUser(h);
      const client = await registered(h, browser, owner);
      for (let i = 0; i < 3; i++) await obtainTokens(h, (await signedInUser(h)).browser, client);
      assert.match((await browser.get(`/applications/${client.id}`)).body, /3 users have authorized it/);
      assert.match((await browser.get('/applications')).body, /3 users have authorized it/);
    });

    it('refuses registration beyond OAUTH_CLIENTS_PER_USER_MAX with a clear message', async (t) => {
      const h = await build(t, dialect, { OAUTH_CLIENTS_PER_USER_MAX: '2' });
      const { user: owner, browser } = await signedInUser(h);
      await registered(h, browser, owner, 'One');
      await registered(h, browser, owner, 'Two');
      const list = await browser.get('/applications');
      assert.match(list.body, /You have 2 of at most 2 applications/);
      assert.doesNotMatch(list.body, /href="\/applications\/new"/);
      const form = await browser.get('/applications/new');
      assert.match(form.body, /role="alert">You already have the most applications allowed \(2\)/);
      const r = await register(browser, { name: 'Three' });
      assert.equal(r.statusCode, 409);
      assert.match(r.body, /You already have the most applications allowed \(2\)\. Delete one/);
      assert.equal((await clientsOf(h, owner.id)).length, 2);
      // Another user has a maximum of their own.
      const other = await signedInUser(h);
      await registered(h, other.browser, other.user, 'Three');
    });

    it('refuses a name the owner already uses, whatever its case, on registration and on change', async (t) => {
      const h = await build(t, dialect);
      const { user: owner, browser } = await signedInUser(h);
      await registered(h, browser, owner, 'Score Tracker');
      const second = await registered(h, browser, owner, 'Other');
      for (const name of [
        'Score Tracker',
        'score tracker',
        'SCORE TRACKER',
        ' Score Tracker ',
        'Score_Tracker',
        'Score  Tracker',
        'Score \u3000 Tracker',
      ]) {
        const r = await register(browser, { name });
        assert.equal(r.statusCode, 409, name);
        assert.match(r.body, /you already have an application named/i);
        assert.match(r.body, /aria-invalid="true" aria-describedby="name-error"/);
      }
      const page = await browser.get(`/applications/${second.id}`);
      const renamed = await browser.post(`/applications/${second.id}`, {
        _csrf: csrfOf(page.body),
        name: 'score TRACKER',
        redirect_uris: REDIRECT_URI,
        avatar: '',
      });
      assert.equal(renamed.statusCode, 409);
      assert.equal((await clientsOf(h, owner.id)).filter((c) => c.name === 'Other').length, 1);
      // Keeping its own name, changing only its case, is no duplicate.
      const recased = await browser.post(`/applications/${second.id}`, {
        _csrf: csrfOf(page.body),
        name: 'OTHER',
        redirect_uris: REDIRECT_URI,
        avatar: '',
      });
      assert.equal(recased.statusCode, 303, recased.body);
      // Another owner may use the name.
      const other = await signedInUser(h);
      await registered(h, other.browser, other.user, 'Score Tracker');
    });

    it("a banned owner's applications: tokens carry nothing, the back channel and authorization refuse, the pages are closed", async (t) => {
      const h = await build(t, dialect);
      const { user: owner, browser } = await signedInUser(h);
      const client = await registered(h, browser, owner);
      const { browser: userBrowser } = await signedInUser(h);
      const tokens = await obtainTokens(h, userBrowser, client, 'read_confidential write');
      const privileges = async () =>
        (await bearerSelf(h, tokens.access_token)).json() as { privileges: number };
      assert.equal((await privileges()).privileges, TokenPrivilege.ReadConfidential | TokenPrivilege.Write);

      await h.setUserPrivileges(owner.id, 0);
      assert.equal((await privileges()).privileges, 0);
      const refresh = await clientToken(h, client, tokens.refresh_token);
      assert.equal(refresh.statusCode, 400);
      assert.equal((refresh.json() as { error: string }).error, 'unauthorized_client');
      const introspected = await backChannel(h, '/oauth/introspect', client, { token: tokens.access_token });
      assert.deepEqual(introspected.json(), { active: false });
      assert.match((refresh.json() as { error_description: string }).error_description, /owner.*banned/);
      const { challenge } = pkcePair();
      const authorize = await userBrowser.get(authorizeUrl({ client, challenge }));
      assert.equal(authorize.statusCode, 400);
      assert.match(authorize.body, /suspended/);
      assert.equal((await browser.get('/applications')).statusCode, 403);
      assert.equal((await browser.get('/applications/new')).statusCode, 403);

      // Lifting the ban gives the tokens back what their scopes carry.
      await h.setUserPrivileges(owner.id, 3);
      assert.equal((await privileges()).privileges, TokenPrivilege.ReadConfidential | TokenPrivilege.Write);
      assert.equal((await clientToken(h, client, tokens.refresh_token)).statusCode, 200);
    });

    it('logs the registration, the new secret and the deletion without a secret or password', async (t) => {
      const lines: string[] = [];
      const stream = new Writable({
        write(chunk: Buffer, _encoding, done) {
          lines.push(chunk.toString('utf8'));
          done();
        },
      });
      const h = await build(
        t,
        dialect,
        { LOGIN_RATE_LIMIT: '100' },
        { logger: { ...(loggerOptions('trace') as object), stream } },
      );
      const { user: owner, browser } = await signedInUser(h);
      await leaveSudoMode(h, owner.id);
      const page = await browser.get('/applications/new');
      const r = await landed(
        browser,
        await browser.post('/applications/new', {
          _csrf: csrfOf(page.body),
          name: 'Logged',
          redirect_uris: REDIRECT_URI,
          type: 'confidential',
          confirm_password: owner.password,
        }),
      );
      assert.equal(r.statusCode, 200, r.body);
      const first = secretOf(r.body);
      const [row] = await clientsOf(h, owner.id);
      const confirm = await browser.get(`/applications/${row!.id}/secret`);
      const rotated = await landed(
        browser,
        await browser.post(`/applications/${row!.id}/secret`, { _csrf: csrfOf(confirm.body) }),
      );
      const second = secretOf(rotated.body);
      const deleted = await browser.post(`/applications/${row!.id}/delete`, { _csrf: csrfOf(confirm.body) });
      assert.equal(deleted.statusCode, 303);
      const log = lines.join('');
      for (const message of ['application registered', 'application secret replaced', 'application deleted'])
        assert.ok(log.includes(message), message);
      for (const secret of [first, second, owner.password, row!.secret_hash, browser.cookies.get('rt')]) {
        assert.ok(secret);
        assert.equal(log.includes(secret), false, 'a secret reached the log');
      }
    });

    it('a signed-out browser is sent to sign in, and comes back', async (t) => {
      const h = await build(t, dialect);
      const browser = new InjectBrowser(h.app);
      for (const path of ['/applications', '/applications/new', '/applications/0123456789abcdef01234567']) {
        const r = await browser.get(path);
        assert.equal(r.statusCode, 303);
        assert.equal(r.headers.location, `/login?next=${encodeURIComponent(path)}`);
      }
    });
  });

  describe(`your applications: attacks [${dialect}]`, () => {
    it("another user's application is answered as an unknown id: not viewed, changed, given a secret or deleted", async (t) => {
      const h = await build(t, dialect);
      const { user: owner, browser: ownerBrowser } = await signedInUser(h);
      const client = await registered(h, ownerBrowser, owner);
      const before = await clientsOf(h, owner.id);
      const { browser } = await signedInUser(h);
      const csrf = csrfOf((await browser.get('/applications')).body);
      const unknown = '0123456789abcdef01234567';
      const answers = async (id: string) => [
        await browser.get(`/applications/${id}`),
        await browser.get(`/applications/${id}/secret`),
        await browser.get(`/applications/${id}/delete`),
        await browser.post(`/applications/${id}`, {
          _csrf: csrf,
          name: 'Taken over',
          redirect_uris: 'https://evil.example/cb',
          avatar: '',
        }),
        await browser.post(`/applications/${id}/secret`, { _csrf: csrf, end_tokens: 'yes' }),
        await browser.post(`/applications/${id}/delete`, { _csrf: csrf }),
      ];
      const theirs = await answers(client.id);
      const nobody = await answers(unknown);
      theirs.forEach((r, i) => {
        assert.equal(r.statusCode, 404, String(i));
        assert.equal(r.body, nobody[i]!.body, 'the same page as for an id that names nothing');
        assert.ok(!r.body.includes('Score Tracker'));
      });
      assert.deepEqual(await clientsOf(h, owner.id), before);
      // Its secret still works.
      const { browser: userBrowser } = await signedInUser(h);
      await obtainTokens(h, userBrowser, client);
    });

    it('refuses every form without its CSRF token or with a wrong one', async (t) => {
      const h = await build(t, dialect);
      const { user: owner, browser } = await signedInUser(h);
      const client = await registered(h, browser, owner);
      const before = await clientsOf(h, owner.id);
      const other = await signedInUser(h);
      const foreign = csrfOf((await other.browser.get('/applications')).body);
      const forms: Array<[string, Record<string, string>]> = [
        ['/applications/new', { name: 'Sneaky', redirect_uris: REDIRECT_URI, type: 'confidential' }],
        [
          `/applications/${client.id}`,
          { name: 'Sneaky', redirect_uris: 'https://evil.example/cb', avatar: '' },
        ],
        [`/applications/${client.id}/secret`, { end_tokens: 'yes' }],
        [`/applications/${client.id}/delete`, {}],
      ];
      for (const [path, fields] of forms)
        for (const _csrf of [undefined, 'not-a-token', foreign]) {
          const r = await browser.post(path, { ...fields, _csrf });
          assert.equal(r.statusCode, 403, `${path} ${_csrf}`);
          assert.match(r.body, /This form has expired or was not sent from this site/);
        }
      assert.deepEqual(await clientsOf(h, owner.id), before);
    });

    it('needs sudo mode for every change: without the password, or with a wrong one, nothing changes', async (t) => {
      const h = await build(t, dialect, { LOGIN_RATE_LIMIT: '100' });
      const { user: owner, browser } = await signedInUser(h);
      const client = await registered(h, browser, owner);
      const before = await clientsOf(h, owner.id);
      await leaveSudoMode(h, owner.id);
      const pages: Array<[string, string, Record<string, string>]> = [
        [
          '/applications/new',
          '/applications/new',
          { name: 'Another', redirect_uris: REDIRECT_URI, type: 'public' },
        ],
        [
          `/applications/${client.id}`,
          `/applications/${client.id}`,
          { name: 'Renamed', redirect_uris: REDIRECT_URI, avatar: '' },
        ],
        [`/applications/${client.id}/secret`, `/applications/${client.id}/secret`, { end_tokens: 'yes' }],
        [`/applications/${client.id}/delete`, `/applications/${client.id}/delete`, {}],
      ];
      for (const [get, post, fields] of pages) {
        const page = await browser.get(get);
        assert.match(page.body, /name="confirm_password"/, get);
        for (const confirm_password of [undefined, 'not the password']) {
          const r = await browser.post(post, { ...fields, _csrf: csrfOf(page.body), confirm_password });
          assert.equal(r.statusCode, 403, `${post} ${confirm_password}`);
          assert.match(r.body, /name="confirm_password"[^>]*autofocus/s, post);
          assert.equal(secretOf(r.body), undefined);
        }
      }
      assert.deepEqual(await clientsOf(h, owner.id), before);
      // With the password, it goes ahead (and sudo mode lasts for the next form).
      const page = await browser.get(`/applications/${client.id}`);
      const saved = await browser.post(`/applications/${client.id}`, {
        _csrf: csrfOf(page.body),
        name: 'Renamed',
        redirect_uris: REDIRECT_URI,
        avatar: '',
        confirm_password: owner.password,
      });
      assert.equal(saved.statusCode, 303, saved.body);
      assert.equal((await clientsOf(h, owner.id))[0]!.name, 'Renamed');
    });

    it('shows a hostile name and avatar as text, and refuses script, data and other bad addresses', async (t) => {
      const h = await build(t, dialect);
      const { user: owner, browser } = await signedInUser(h);
      const hostile = '<script>alert(1)</script>"\'&';
      const avatar = 'https://cdn.example/a.png?"onerror="alert(1)';
      const r = await register(browser, { name: hostile, avatar });
      assert.equal(r.statusCode, 200, r.body);
      const [row] = await clientsOf(h, owner.id);
      for (const page of [
        r,
        await browser.get('/applications'),
        await browser.get(`/applications/${row!.id}`),
      ]) {
        assert.ok(!page.body.includes('<script>alert(1)'), 'the name is escaped');
        assert.ok(!page.body.includes('"onerror="'), 'the avatar stays inside its attribute');
        assert.match(page.body, /&lt;script&gt;alert\(1\)&lt;\/script&gt;&quot;&#39;&amp;/);
      }
      const refusals: Array<[Record<string, string>, RegExp]> = [
        [{ avatar: 'javascript:alert(1)' }, /the avatar must be an http\(s\) URL/i],
        [{ avatar: 'data:image/png;base64,AAAA' }, /the avatar must be an http\(s\) URL/i],
        [{ redirect_uris: 'javascript:alert(1)' }, /the javascript: scheme is not allowed/i],
        [{ redirect_uris: 'data:text/html,<script>alert(1)</script>' }, /the data: scheme is not allowed/i],
        [{ redirect_uris: 'https://app.example/cb#frag' }, /must not contain a fragment/i],
        [{ redirect_uris: '/relative/cb' }, /is not an absolute URI/i],
        [{ redirect_uris: '' }, /at least one redirect URI is required/i],
        [{ name: '   ' }, /the name must be 1–255 characters/i],
        [{ name: 'x'.repeat(256) }, /the name must be 1–255 characters/i],
        [{ name: 'tab\tname' }, /control characters/i],
        [{ name: 'C1 \u009b[2K' }, /control characters/i],
        // Invisible or formatting characters: a right-to-left override would turn the consent page's
        // sentence around; the others make a name that looks like another one.
        [{ name: 'Evil\u202egnp.exe' }, /invisible or formatting characters/i],
        [{ name: 'Score Tracker\u200d' }, /invisible or formatting characters/i],
        [{ name: 'Score\u2060 Tracker' }, /invisible or formatting characters/i],
        [{ name: 'Score \u00adTracker' }, /invisible or formatting characters/i],
        [{ name: 'Score Tracker\ufe0f' }, /invisible or formatting characters/i],
        [{ name: 'Score Tracker\u034f' }, /invisible or formatting characters/i],
        [{ name: 'Score Tracker\u{e0001}' }, /invisible or formatting characters/i],
        // Blank to the eye: the consent page would read "Authorize ⠀?".
        [{ name: '\u2800' }, /the name must show something/i],
        [{ name: ' \u2800 \u2800 ' }, /the name must show something/i],
        [{ name: '\u0301\u0308\u0323' }, /the name must show something/i],
        // "Zalgo": marks piled on a letter spill over the lines around the name.
        [
          { name: `Score${'\u0336\u0301\u0308\u0323\u0330'.repeat(50)}` },
          /combining marks on one character/i,
        ],
        // A URL is printable ASCII: no escape sequence reaches the terminal of an operator listing clients.
        [{ redirect_uris: 'https://ok.example/cb\u001b[2K\u001b]0;owned\u0007' }, /percent-encode it/i],
        [{ redirect_uris: 'https://ok.example/c b' }, /percent-encode it/i],
        [{ redirect_uris: 'https://ok.example/cb\u0085' }, /percent-encode it/i],
        [{ avatar: 'https://cdn.example/\u0007.png' }, /percent-encode it/i],
      ];
      for (const [fields, message] of refusals) {
        const bad = await register(browser, { name: 'Fine name', ...fields });
        assert.equal(bad.statusCode, 400, JSON.stringify(fields));
        assert.match(bad.body, message, JSON.stringify(fields));
        assert.ok(!bad.body.includes('<script>alert(1)</script>'));
      }
      // A change is held to the same rules.
      const page = await browser.get(`/applications/${row!.id}`);
      const changed = await browser.post(`/applications/${row!.id}`, {
        _csrf: csrfOf(page.body),
        name: 'Fine',
        redirect_uris: 'javascript:alert(1)',
        avatar: '',
      });
      assert.equal(changed.statusCode, 400);
      assert.equal((await clientsOf(h, owner.id)).length, 1);
      assert.equal((await clientsOf(h, owner.id))[0]!.name, hostile);
    });

    it('refuses a type that is neither confidential nor public, and a field sent twice', async (t) => {
      const h = await build(t, dialect);
      const { user: owner, browser } = await signedInUser(h);
      const r = await register(browser, { name: 'Odd', type: 'secret-ish' });
      assert.equal(r.statusCode, 400);
      assert.match(r.body, /confidential or public/);
      const page = await browser.get('/applications/new');
      const twice = await browser.request({
        method: 'POST',
        url: '/applications/new',
        headers: { 'content-type': 'application/x-www-form-urlencoded' },
        payload: `_csrf=${encodeURIComponent(csrfOf(page.body))}&name=a&name=b&redirect_uris=${encodeURIComponent(REDIRECT_URI)}`,
      });
      assert.equal(twice.statusCode, 400);
      assert.match(twice.headers['content-type'] as string, /text\/html/);
      assert.equal((await clientsOf(h, owner.id)).length, 0);
    });
  });
}
