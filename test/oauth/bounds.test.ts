// What one user can pile up through the OAuth server, on every dialect: the newest grants per user and
// application and per user (the oldest end), two access tokens per grant however often it refreshes,
// the newest unexchanged codes; rotated refresh tokens kept for their reuse window only, then swept
// (on the test's own clock); and the token page, which lists at most 100 connected applications and
// says how many there are.
import { actOutsideRequest } from '../../src/auth/security-log.ts';
import { describe, it, type TestContext } from 'node:test';
import assert from 'node:assert/strict';
import type { LightMyRequestResponse } from 'fastify';
import { DIALECTS } from '../helpers/dialects.ts';
import { build, body, type Harness, type TestUser } from '../helpers/app.ts';
import { InjectBrowser } from '../helpers/inject-browser.ts';
import {
  exchangeCode,
  obtainCode,
  obtainTokens,
  pkcePair,
  refreshTokens,
  registerClient,
  type TestClient,
} from '../helpers/oauth.ts';
import { eventually } from '../helpers/waiting.ts';
import { sha256Hex } from '../../src/oauth/secrets.ts';
import { insertClient, saveConsent } from '../../src/oauth/repository.ts';
import { nowSeconds } from '../../src/auth/clock.ts';

/** The token endpoint's rate limits out of the way: these tests are about what is stored. */
const UNLIMITED = { OAUTH_TOKEN_RATE_LIMIT: '1000000', OAUTH_TOKEN_USER_RATE_LIMIT: '1000000' };

const selfWith = (h: Harness, accessToken: string) =>
  h.api({ method: 'GET', path: '/tokens/self', headers: { authorization: `Bearer ${accessToken}` } });

const errorOf = (r: LightMyRequestResponse) => body(r) as { error?: string; error_description?: string };

/** A user's OAuth rows (only those with one application when `clientId` is given). */
async function rowsOf(h: Harness, userId: number, clientId?: string) {
  const count = async (
    table: 'oauth_access_tokens' | 'oauth_refresh_tokens' | 'oauth_codes',
    used?: number,
  ): Promise<number> => {
    let query = h.store.db
      .selectFrom(table)
      .select((eb) => eb.fn.countAll<number | string>().as('n'))
      .where('user_id', '=', userId);
    if (clientId !== undefined) query = query.where('client_id', '=', clientId);
    if (used !== undefined) query = query.where('used', '=', used);
    return Number((await query.executeTakeFirstOrThrow()).n);
  };
  return {
    accessTokens: await count('oauth_access_tokens'),
    liveGrants: await count('oauth_refresh_tokens', 0),
    rotatedRefreshTokens: await count('oauth_refresh_tokens', 1),
    unexchangedCodes: await count('oauth_codes', 0),
  };
}

for (const dialect of DIALECTS) {
  describe(`OAuth bounds per user and application [${dialect}]`, () => {
    async function setup(t: TestContext, env: Record<string, string>) {
      const h = await build(t, dialect, { ...UNLIMITED, ...env });
      const owner = await h.createUser();
      const user = await h.createUser();
      const browser = new InjectBrowser(h.app);
      await browser.signIn(user);
      const client = (name: string) => registerClient(h, { ownerId: owner.id, public: true, name });
      return { h, owner, user, browser, client };
    }

    it('refreshing in a loop keeps the newest grants of the application and two access tokens per grant', async (t) => {
      const { h, user, browser, client } = await setup(t, {
        OAUTH_GRANTS_PER_CLIENT_MAX: '3',
        OAUTH_GRANTS_PER_USER_MAX: '50',
      });
      const app = await client('Grant Hoarder');
      const grants = [];
      for (let i = 0; i < 5; i++) grants.push(await obtainTokens(h, browser, app));

      // The two oldest grants ended, every token of them; the three newest still work.
      for (const ended of grants.slice(0, 2)) {
        assert.equal((await selfWith(h, ended.access_token)).statusCode, 404);
        const refused = await refreshTokens(h, app, ended.refresh_token);
        assert.equal(refused.statusCode, 400);
        assert.equal(errorOf(refused).error, 'invalid_grant');
      }
      for (const kept of grants.slice(2))
        assert.equal((await selfWith(h, kept.access_token)).statusCode, 200);
      assert.equal((await rowsOf(h, user.id, app.id)).liveGrants, 3);

      // One grant refreshed 40 times: its two newest access tokens live, the older ones ended.
      const issued = [grants[4]!];
      for (let i = 0; i < 40; i++) {
        const r = await refreshTokens(h, app, issued.at(-1)!.refresh_token);
        assert.equal(r.statusCode, 200, r.body);
        issued.push(r.json() as (typeof issued)[number]);
      }
      assert.equal((await selfWith(h, issued.at(-1)!.access_token)).statusCode, 200);
      assert.equal((await selfWith(h, issued.at(-2)!.access_token)).statusCode, 200);
      assert.equal((await selfWith(h, issued.at(-3)!.access_token)).statusCode, 404);
      assert.equal((await selfWith(h, issued[0]!.access_token)).statusCode, 404);
      const rows = await rowsOf(h, user.id, app.id);
      assert.equal(rows.liveGrants, 3);
      // grants[2] and grants[3] hold one access token each, the refreshed grant two.
      assert.equal(rows.accessTokens, 4);
    });

    it('keeps the newest grants of the user across applications, and leaves other users alone', async (t) => {
      const { h, user, browser, client } = await setup(t, {
        OAUTH_GRANTS_PER_CLIENT_MAX: '3',
        OAUTH_GRANTS_PER_USER_MAX: '4',
      });
      const [a, b, c] = [await client('App A'), await client('App B'), await client('App C')];
      const other = await h.createUser();
      const otherBrowser = new InjectBrowser(h.app);
      await otherBrowser.signIn(other);
      const othersGrant = await obtainTokens(h, otherBrowser, a);

      const order: Array<[TestClient, string]> = [
        [a, 'a1'],
        [b, 'b1'],
        [a, 'a2'],
        [c, 'c1'],
        [b, 'b2'],
        [c, 'c2'],
      ];
      const grants = new Map<string, { access_token: string; refresh_token: string }>();
      for (const [app, name] of order) grants.set(name, await obtainTokens(h, browser, app));

      // Six grants, four kept: the two oldest (a1, b1) ended.
      assert.equal((await rowsOf(h, user.id)).liveGrants, 4);
      for (const name of ['a1', 'b1'])
        assert.equal((await selfWith(h, grants.get(name)!.access_token)).statusCode, 404, name);
      for (const name of ['a2', 'c1', 'b2', 'c2'])
        assert.equal((await selfWith(h, grants.get(name)!.access_token)).statusCode, 200, name);
      const refused = await refreshTokens(h, a, grants.get('a1')!.refresh_token);
      assert.equal(errorOf(refused).error, 'invalid_grant');
      // Refreshing makes a grant the newest: c1 refreshed, then a new grant ends a2, not c1.
      const c1 = await refreshTokens(h, c, grants.get('c1')!.refresh_token);
      assert.equal(c1.statusCode, 200, c1.body);
      const b3 = await obtainTokens(h, browser, b);
      assert.equal((await selfWith(h, grants.get('a2')!.access_token)).statusCode, 404);
      assert.equal((await selfWith(h, (c1.json() as { access_token: string }).access_token)).statusCode, 200);
      assert.equal((await selfWith(h, b3.access_token)).statusCode, 200);
      assert.equal((await rowsOf(h, user.id)).liveGrants, 4);

      // Another user's grant with the same application was never counted.
      assert.equal((await selfWith(h, othersGrant.access_token)).statusCode, 200);
      assert.equal((await rowsOf(h, other.id)).liveGrants, 1);
    });

    it('exchanges and refreshes racing at the bound all answer, and the bound holds', async (t) => {
      const { h, user, browser, client } = await setup(t, {
        OAUTH_GRANTS_PER_CLIENT_MAX: '3',
        OAUTH_GRANTS_PER_USER_MAX: '50',
      });
      const app = await client('Racer');
      const held = [];
      for (let i = 0; i < 3; i++) held.push(await obtainTokens(h, browser, app));
      const codes = [];
      for (let i = 0; i < 6; i++) {
        const pkce = pkcePair();
        codes.push({ ...pkce, code: await obtainCode(browser, { client: app, challenge: pkce.challenge }) });
      }
      // Six new grants and three refreshes of the grants they push out, all at once.
      const answers = await Promise.all([
        ...codes.map((c) => exchangeCode(h, app, c.code, c.verifier)),
        ...held.map((g) => refreshTokens(h, app, g.refresh_token)),
      ]);
      for (const answer of answers)
        assert.ok(answer.statusCode === 200 || answer.statusCode === 400, answer.body);
      assert.equal(
        answers.filter((a) => a.statusCode === 400).every((a) => errorOf(a).error === 'invalid_grant'),
        true,
      );
      assert.equal((await rowsOf(h, user.id, app.id)).liveGrants, 3);
    });

    it('keeps the newest unexchanged codes of the application and of the user', async (t) => {
      // Codes carry their time in seconds: the test's clock moves one second per code.
      let now = nowSeconds();
      const h = await build(
        t,
        dialect,
        { ...UNLIMITED, OAUTH_GRANTS_PER_CLIENT_MAX: '3', OAUTH_GRANTS_PER_USER_MAX: '4' },
        { clock: () => now },
      );
      const owner = await h.createUser();
      const user = await h.createUser();
      const browser = new InjectBrowser(h.app);
      await browser.signIn(user);
      const [a, b] = [
        await registerClient(h, { ownerId: owner.id, public: true, name: 'Code Hoarder' }),
        await registerClient(h, { ownerId: owner.id, public: true, name: 'Other App' }),
      ];
      const codeFor = async (client: TestClient) => {
        now += 1;
        const pkce = pkcePair();
        return { ...pkce, client, code: await obtainCode(browser, { client, challenge: pkce.challenge }) };
      };
      const codes = [];
      for (let i = 0; i < 6; i++) codes.push(await codeFor(a));
      // Three per application: the first three ended, whatever the order they were made in within a second.
      assert.equal((await rowsOf(h, user.id, a.id)).unexchangedCodes, 3);
      // Four per user: two codes with another application end the oldest of the first application's.
      codes.push(await codeFor(b), await codeFor(b));
      assert.equal((await rowsOf(h, user.id)).unexchangedCodes, 4);
      assert.equal((await rowsOf(h, user.id, a.id)).unexchangedCodes, 2);
      for (const ended of [codes[0]!, codes[3]!]) {
        const refused = await exchangeCode(h, a, ended.code, ended.verifier);
        assert.equal(refused.statusCode, 400);
        assert.equal(errorOf(refused).error, 'invalid_grant');
      }
      for (const kept of [codes[4]!, codes[5]!, codes[6]!, codes[7]!]) {
        const exchanged = await exchangeCode(h, kept.client, kept.code, kept.verifier);
        assert.equal(exchanged.statusCode, 200, exchanged.body);
      }
    });
  });

  describe(`rotated refresh tokens: the reuse window and the sweep [${dialect}]`, () => {
    /** An app whose clock the test moves (Unix seconds), sweeping every second. */
    async function setup(t: TestContext) {
      let now = nowSeconds();
      const h = await build(t, dialect, { ...UNLIMITED, TOKEN_SWEEP_INTERVAL_S: '1' }, { clock: () => now });
      const owner = await h.createUser();
      const user: TestUser = await h.createUser();
      const browser = new InjectBrowser(h.app);
      await browser.signIn(user);
      const app = await registerClient(h, { ownerId: owner.id, public: true });
      return { h, user, browser, app, advance: (s: number) => (now += s) };
    }

    const HOUR = 3600;

    it('a rotated token presented again within a day revokes its grant', async (t) => {
      const { h, browser, app, advance } = await setup(t);
      const first = await obtainTokens(h, browser, app);
      const second = await refreshTokens(h, app, first.refresh_token);
      assert.equal(second.statusCode, 200, second.body);
      advance(23 * HOUR);
      const replay = await refreshTokens(h, app, first.refresh_token);
      assert.equal(replay.statusCode, 400);
      assert.match(errorOf(replay).error_description!, /already used/);
      const afterReplay = await refreshTokens(
        h,
        app,
        (second.json() as { refresh_token: string }).refresh_token,
      );
      assert.equal(errorOf(afterReplay).error, 'invalid_grant', 'the whole grant was revoked');
    });

    it('a rotated token is swept a day after its rotation; its grant goes on', async (t) => {
      const { h, user, browser, app, advance } = await setup(t);
      const first = await obtainTokens(h, browser, app);
      const second = await refreshTokens(h, app, first.refresh_token);
      assert.equal(second.statusCode, 200, second.body);
      const spent = () =>
        h.store.db
          .selectFrom('oauth_refresh_tokens')
          .select('id')
          .where('token_hash', '=', sha256Hex(first.refresh_token))
          .execute();
      assert.equal((await spent()).length, 1, 'kept for its reuse window');
      advance(24 * HOUR + 1);
      assert.ok(
        await eventually(100, 100, async () => (await spent()).length === 0),
        'the sweep deleted the rotated token past its window',
      );
      assert.equal((await rowsOf(h, user.id)).rotatedRefreshTokens, 0);
      // Presented now, it is unknown: refused, and the grant it came from is not revoked.
      const late = await refreshTokens(h, app, first.refresh_token);
      assert.equal(late.statusCode, 400);
      assert.match(errorOf(late).error_description!, /invalid or has been revoked/);
      const next = await refreshTokens(h, app, (second.json() as { refresh_token: string }).refresh_token);
      assert.equal(next.statusCode, 200, next.body);
    });
  });

  describe(`connected applications on the token page [${dialect}]`, () => {
    it('lists at most 100 and says how many there are', async (t) => {
      const h = await build(t, dialect, UNLIMITED);
      const owner = await h.createUser();
      const user = await h.createUser();
      const now = nowSeconds();
      // 102 approved applications, written straight to the database (a fixture, as createToken is).
      for (let i = 0; i < 102; i++) {
        const id = `bulk-app-${String(i).padStart(3, '0')}`;
        await insertClient(h.store.db, {
          id,
          name: `Bulk App ${String(i).padStart(3, '0')}`,
          owner_id: owner.id,
          avatar: '',
          redirect_uris: JSON.stringify(['https://app.example/callback']),
          secret_hash: null,
          created_at: now,
        });
        await saveConsent(
          h.store.db,
          { userId: user.id, clientId: id, scope: 'write' },
          actOutsideRequest('web', now),
        );
      }
      // ...and one more that holds a token, through the whole flow.
      const browser = new InjectBrowser(h.app);
      await browser.signIn(user);
      const used = await registerClient(h, { ownerId: owner.id, public: true, name: 'Aardvark Tracker' });
      await obtainTokens(h, browser, used);

      const page = await browser.get('/tokens');
      assert.equal(page.statusCode, 200);
      const listed = [...page.body.matchAll(/aria-label="Revoke access of ([^"]+?)…"/g)].map((m) => m[1]);
      assert.equal(listed.length, 100);
      assert.equal(listed[0], 'Aardvark Tracker', 'the first by name');
      assert.match(page.body, /Showing 100 of 103 applications/);
    });

    it('says nothing of a cap when every application is listed', async (t) => {
      const h = await build(t, dialect, UNLIMITED);
      const owner = await h.createUser();
      const user = await h.createUser();
      const browser = new InjectBrowser(h.app);
      await browser.signIn(user);
      const app = await registerClient(h, { ownerId: owner.id, public: true, name: 'Lone App' });
      await obtainTokens(h, browser, app);
      const page = await browser.get('/tokens');
      assert.match(page.body, /Revoke access of Lone App/);
      assert.doesNotMatch(page.body, /Showing \d/);
    });
  });
}
