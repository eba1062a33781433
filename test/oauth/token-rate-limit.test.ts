// The token endpoint's rate limits, on every dialect: token requests per user and application
// (OAUTH_TOKEN_RATE_LIMIT) and per user across applications (OAUTH_TOKEN_USER_RATE_LIMIT), answered
// beyond them with RFC 6749's error JSON (`slow_down`), HTTP 429 and Retry-After, issuing nothing; and
// with REDIS_URL one count for every instance.
import { describe, it, type TestContext } from 'node:test';
import assert from 'node:assert/strict';
import type { LightMyRequestResponse } from 'fastify';
import { DIALECTS } from '../helpers/dialects.ts';
import { build, body, type Harness } from '../helpers/app.ts';
import { InjectBrowser } from '../helpers/inject-browser.ts';
import {
  exchangeCode,
  obtainCode,
  obtainTokens,
  pkcePair,
  refreshTokens,
  registerClient,
  type IssuedTokens,
  type TestClient,
} from '../helpers/oauth.ts';
import { REDIS_URL, redisSkipReason, uniqueRedisPrefix } from '../helpers/redis.ts';
import { loadConfig } from '../../src/config.ts';
import { buildApp } from '../../src/app.ts';
import { openStore } from '../../src/store/database.ts';

const WINDOW_S = 60;

/** A 429 in RFC 6749 §5.2's form: slow_down, a description, Retry-After within the window, nothing issued. */
function assertSlowDown(r: LightMyRequestResponse, describes: RegExp): void {
  assert.equal(r.statusCode, 429, r.body);
  const answer = body(r);
  assert.equal(answer.error, 'slow_down');
  assert.match(answer.error_description as string, describes);
  assert.equal(answer.access_token, undefined);
  const retryAfter = Number(r.headers['retry-after']);
  assert.ok(Number.isInteger(retryAfter) && retryAfter >= 1 && retryAfter <= WINDOW_S, String(retryAfter));
  assert.equal(r.headers['cache-control'], 'no-store');
  assert.match(String(r.headers['content-type']), /^application\/json/);
}

const refreshed = (r: LightMyRequestResponse) => {
  assert.equal(r.statusCode, 200, r.body);
  return r.json() as { access_token: string; refresh_token: string };
};

for (const dialect of DIALECTS) {
  describe(`token endpoint rate limits [${dialect}]`, () => {
    async function setup(
      t: TestContext,
      perClient: number,
      perUser: number,
      env: Record<string, string> = {},
    ) {
      const h = await build(t, dialect, {
        OAUTH_TOKEN_RATE_LIMIT: String(perClient),
        OAUTH_TOKEN_USER_RATE_LIMIT: String(perUser),
        OAUTH_TOKEN_RATE_WINDOW_S: String(WINDOW_S),
        ...env,
      });
      const owner = await h.createUser();
      const signedIn = async () => {
        const user = await h.createUser();
        const browser = new InjectBrowser(h.app);
        await browser.signIn(user);
        return { user, browser };
      };
      const client = (name: string) => registerClient(h, { ownerId: owner.id, public: true, name });
      return { h, signedIn, client };
    }

    it('answers 429 slow_down past the limit of one user with one application; others go on', async (t) => {
      const { h, signedIn, client } = await setup(t, 3, 100);
      const [a, b] = [await client('Refresher'), await client('Other App')];
      const { user, browser } = await signedIn();

      let tokens = await obtainTokens(h, browser, a);
      tokens = refreshed(await refreshTokens(h, a, tokens.refresh_token));
      tokens = refreshed(await refreshTokens(h, a, tokens.refresh_token));
      const refused = await refreshTokens(h, a, tokens.refresh_token);
      assertSlowDown(refused, /this application for this user/);
      // Nothing was rotated: the token presented is still the grant's live one.
      const row = await h.store.db
        .selectFrom('oauth_refresh_tokens')
        .select('used')
        .where('user_id', '=', user.id)
        .orderBy('id', 'desc')
        .executeTakeFirstOrThrow();
      assert.equal(row.used, 0);
      // A code exchange counts the same way.
      const { verifier, challenge } = pkcePair();
      const code = await obtainCode(browser, { client: a, challenge });
      assertSlowDown(await exchangeCode(h, a, code, verifier), /this application for this user/);

      // The same user with another application, and another user with this one, are not held back.
      const withB = await obtainTokens(h, browser, b);
      refreshed(await refreshTokens(h, b, withB.refresh_token));
      const other = await signedIn();
      const others = await obtainTokens(h, other.browser, a);
      refreshed(await refreshTokens(h, a, others.refresh_token));
    });

    it('answers 429 slow_down past the limit of one user across applications', async (t) => {
      const { h, signedIn, client } = await setup(t, 100, 4);
      const apps = [await client('App A'), await client('App B'), await client('App C')];
      const { browser } = await signedIn();

      const a = await obtainTokens(h, browser, apps[0]!);
      const b = await obtainTokens(h, browser, apps[1]!);
      refreshed(await refreshTokens(h, apps[0]!, a.refresh_token));
      refreshed(await refreshTokens(h, apps[1]!, b.refresh_token));
      // A fifth request, through a third application the user has never used with tokens.
      const { verifier, challenge } = pkcePair();
      const code = await obtainCode(browser, { client: apps[2]!, challenge });
      assertSlowDown(await exchangeCode(h, apps[2]!, code, verifier), /for this user;/);

      const other = await signedIn();
      await obtainTokens(h, other.browser, apps[2]!);
    });

    // A request refused for its application's limit is not counted against the user: whoever holds one
    // live refresh token of one application, sending as fast as it may, spends at most that application's
    // limit of the user's budget, and the user's other applications go on.
    async function oneAppFloods(t: TestContext, env: Record<string, string>) {
      const { h, signedIn, client } = await setup(t, 10, 30, env);
      const [a, b] = [await client('Greedy App'), await client('Other App')];
      const { browser } = await signedIn();

      let tokens = await obtainTokens(h, browser, a);
      let refused = 0;
      for (let i = 0; i < 40; i++) {
        const r = await refreshTokens(h, a, tokens.refresh_token);
        if (r.statusCode === 200) tokens = refreshed(r);
        else {
          assertSlowDown(r, /^Too many token requests/);
          refused++;
        }
      }
      // The exchange and nine refreshes passed; the rest were refused for the application.
      assert.equal(refused, 31);

      const { verifier, challenge } = pkcePair();
      const code = await obtainCode(browser, { client: b, challenge });
      const exchanged = await exchangeCode(h, b, code, verifier);
      assert.equal(exchanged.statusCode, 200, exchanged.body);
      refreshed(await refreshTokens(h, b, (exchanged.json() as IssuedTokens).refresh_token));
    }

    it('never counts a request refused for its application against the user', async (t) => {
      await oneAppFloods(t, {});
    });

    it('never counts a request refused for its application against the user, with REDIS_URL', async (t) => {
      const skip = await redisSkipReason();
      if (skip !== undefined) return t.skip(skip);
      await oneAppFloods(t, { REDIS_URL, REDIS_KEY_PREFIX: uniqueRedisPrefix() });
    });

    // Requests that have not proven they may act for the user are never counted against the user: with an
    // intercepted code but not its verifier (or an expired code, or an expired refresh token), a flood of
    // requests must leave the user's own exchanges and refreshes, on this application and on others, alone.
    const FLOOD = 35; // past both limits below (10 per user and application, 30 per user)

    async function victim(t: TestContext) {
      const { h, signedIn, client } = await setup(t, 10, 30);
      const app = await client('Public App');
      const owner = await h.createUser();
      const confidential = await registerClient(h, { ownerId: owner.id, public: false, name: 'Server App' });
      const { browser } = await signedIn();
      const elsewhere = await obtainTokens(h, browser, confidential);
      return { h, app, confidential, browser, elsewhere };
    }

    /** `send` FLOOD times: every answer is invalid_grant, none a 429. */
    async function flood(send: () => Promise<LightMyRequestResponse>, describes: RegExp) {
      for (let i = 0; i < FLOOD; i++) {
        const r = await send();
        assert.equal(r.statusCode, 400, `request ${i + 1}: ${r.body}`);
        assert.equal(body(r).error, 'invalid_grant');
        assert.match(body(r).error_description as string, describes);
      }
    }

    /** The user's own requests go on: a new code of `app` is exchanged, and the grant elsewhere refreshed. */
    async function userUnharmed(
      h: Harness,
      app: TestClient,
      confidential: TestClient,
      browser: InjectBrowser,
      elsewhere: IssuedTokens,
    ) {
      const { verifier, challenge } = pkcePair();
      const code = await obtainCode(browser, { client: app, challenge });
      const exchanged = await exchangeCode(h, app, code, verifier);
      assert.equal(exchanged.statusCode, 200, exchanged.body);
      refreshed(await refreshTokens(h, confidential, elsewhere.refresh_token));
    }

    it('never counts an exchange with a wrong code_verifier against the user', async (t) => {
      const { h, app, confidential, browser, elsewhere } = await victim(t);
      const { verifier, challenge } = pkcePair();
      const intercepted = await obtainCode(browser, { client: app, challenge });

      await flood(
        () => exchangeCode(h, app, intercepted, pkcePair().verifier),
        /code_verifier does not match|too many times/,
      );
      // The flood burned the intercepted code: its own verifier no longer exchanges it.
      const late = await exchangeCode(h, app, intercepted, verifier);
      assert.equal(late.statusCode, 400, late.body);
      assert.equal(body(late).error, 'invalid_grant');
      await userUnharmed(h, app, confidential, browser, elsewhere);
    });

    it('never counts an exchange with a wrong redirect_uri against the user', async (t) => {
      const { h, app, confidential, browser, elsewhere } = await victim(t);
      const { verifier, challenge } = pkcePair();
      const intercepted = await obtainCode(browser, { client: app, challenge });

      await flood(
        () => exchangeCode(h, app, intercepted, verifier, { redirect_uri: 'https://evil.example/cb' }),
        /redirect_uri does not match|too many times/,
      );
      await userUnharmed(h, app, confidential, browser, elsewhere);
    });

    it('never counts an expired code against the user', async (t) => {
      const { h, app, confidential, browser, elsewhere } = await victim(t);
      const { verifier, challenge } = pkcePair();
      const stale = await obtainCode(browser, { client: app, challenge });
      const past = Math.floor(Date.now() / 1000) - 1;
      await h.store.db.updateTable('oauth_codes').set({ expires_at: past }).execute();

      await flood(() => exchangeCode(h, app, stale, verifier), /code has expired/);
      await userUnharmed(h, app, confidential, browser, elsewhere);
    });

    it('never counts an expired refresh token against the user', async (t) => {
      const { h, app, confidential, browser, elsewhere } = await victim(t);
      const old = await obtainTokens(h, browser, app);
      const past = Math.floor(Date.now() / 1000) - 1;
      await h.store.db
        .updateTable('oauth_refresh_tokens')
        .set({ expires_at: past })
        .where('client_id', '=', app.id)
        .execute();

      await flood(() => refreshTokens(h, app, old.refresh_token), /refresh token has expired/);
      await userUnharmed(h, app, confidential, browser, elsewhere);
    });

    it('still revokes the grant of a replayed code, with a wrong verifier too, and never counts the replays', async (t) => {
      const { h, app, confidential, browser, elsewhere } = await victim(t);
      const { verifier, challenge } = pkcePair();
      const code = await obtainCode(browser, { client: app, challenge });
      const first = await exchangeCode(h, app, code, verifier);
      assert.equal(first.statusCode, 200, first.body);
      const issued = first.json() as IssuedTokens;

      await flood(() => exchangeCode(h, app, code, pkcePair().verifier), /already used/);
      const bearer = { authorization: `Bearer ${issued.access_token}` };
      assert.equal((await h.api({ method: 'GET', path: '/tokens/self', headers: bearer })).statusCode, 404);
      const revoked = await refreshTokens(h, app, issued.refresh_token);
      assert.equal(body(revoked).error, 'invalid_grant');
      await userUnharmed(h, app, confidential, browser, elsewhere);
    });
  });
}

describe('token endpoint rate limits with REDIS_URL', async () => {
  const skip = await redisSkipReason();

  it('count once for every instance sharing the Redis', { skip }, async (t) => {
    const env = {
      REDIS_URL,
      REDIS_KEY_PREFIX: uniqueRedisPrefix(),
      OAUTH_TOKEN_RATE_LIMIT: '100',
      OAUTH_TOKEN_USER_RATE_LIMIT: '4',
    };
    const first = await build(t, 'sqlite', env);
    // A second instance on the same database and the same Redis.
    const config = loadConfig({ LOG_LEVEL: 'silent', BCRYPT_COST: '4', ...env });
    config.database = first.database.config;
    const second: Harness = {
      ...first,
      app: await buildApp(config, { store: await openStore(first.database.config) }),
    };
    t.after(() => second.app.close());
    await second.app.ready();

    const owner = await first.createUser();
    const user = await first.createUser();
    const browser = new InjectBrowser(first.app);
    await browser.signIn(user);
    const app = await registerClient(first, { ownerId: owner.id, public: true });
    // Four requests, alternating between the instances: each instance alone would allow four.
    let tokens = await obtainTokens(first, browser, app);
    for (const h of [second, first, second])
      tokens = refreshed(await refreshTokens(h, app, tokens.refresh_token));
    assertSlowDown(await refreshTokens(first, app, tokens.refresh_token), /for this user;/);
    assertSlowDown(await refreshTokens(second, app, tokens.refresh_token), /for this user;/);
  });
});
