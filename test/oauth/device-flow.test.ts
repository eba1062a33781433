// The device authorization grant (RFC 8628) over HTTP (inject), on every dialect: a device starts, a
// signed-in user approves on /device, the device polls and gets tokens that read /v1/tokens/self; each
// RFC 8628 error (authorization_pending, slow_down, access_denied, expired_token) and a reused code
// (invalid_grant); public and confidential clients; sudo mode, CSRF, the security log; and the attacks:
// user-code guessing against its limit, another client's device code, a reused device code.
import { describe, it, type TestContext } from 'node:test';
import assert from 'node:assert/strict';
import { DIALECTS } from '../helpers/dialects.ts';
import { body, build } from '../helpers/app.ts';
import { InjectBrowser, csrfOf, hiddenFieldsOf, leaveSudoMode } from '../helpers/inject-browser.ts';
import {
  decideOnDevicePage,
  pollDevice,
  registerClient,
  startDevice,
  verifyIdToken,
  type TestClient,
} from '../helpers/oauth.ts';
import { nowSeconds } from '../../src/auth/clock.ts';
import { listEvents } from '../../src/auth/security-log.ts';
import { DEVICE_CODE_TTL_S, USER_CODE_ALPHABET } from '../../src/oauth/device.ts';
import { USER_CODE_TRIES_PER_USER } from '../../src/oauth/device-limits.ts';

interface Started {
  device_code: string;
  user_code: string;
  verification_uri: string;
  verification_uri_complete: string;
  expires_in: number;
  interval: number;
}

for (const dialect of DIALECTS) {
  describe(`the device authorization grant [${dialect}]`, () => {
    async function setup(t: TestContext, options: { public?: boolean; clock?: () => number } = {}) {
      const h = await build(
        t,
        dialect,
        { LOGIN_IP_RATE_LIMIT: '1000' },
        options.clock ? { clock: options.clock } : {},
      );
      const owner = await h.createUser();
      const user = await h.createUser();
      const client = await registerClient(h, { ownerId: owner.id, public: options.public ?? false });
      const browser = new InjectBrowser(h.app);
      await browser.signIn(user);
      return { h, owner, user, client, browser };
    }

    async function start(h: Parameters<typeof startDevice>[0], client: TestClient, scope?: string) {
      const r = await startDevice(h, client, scope);
      assert.equal(r.statusCode, 200, r.body);
      assert.equal(r.headers['cache-control'], 'no-store');
      return r.json() as Started;
    }

    for (const kind of ['confidential', 'public'] as const)
      it(`signs a device in end to end (a ${kind} client): code, approval on /device, polling, a token that reads /v1/tokens/self`, async (t) => {
        let now = nowSeconds();
        const { h, user, client, browser } = await setup(t, { public: kind === 'public', clock: () => now });
        const started = await start(h, client, 'openid profile email read_confidential');
        assert.match(
          started.user_code,
          new RegExp(`^[${USER_CODE_ALPHABET}]{4}-[${USER_CODE_ALPHABET}]{4}$`),
        );
        assert.match(started.device_code, /^[A-Za-z0-9_-]{43}$/);
        assert.equal(started.verification_uri, 'http://localhost/device');
        assert.equal(
          started.verification_uri_complete,
          `http://localhost/device?user_code=${started.user_code}`,
        );
        assert.equal(started.expires_in, DEVICE_CODE_TTL_S);
        assert.equal(started.interval, 5);
        // Stored hashed: neither code is in its row.
        const row = await h.store.db.selectFrom('oauth_device_codes').selectAll().executeTakeFirstOrThrow();
        assert.ok(!JSON.stringify(row).includes(started.device_code));
        assert.ok(!JSON.stringify(row).includes(started.user_code.replace('-', '')));

        const pending = await pollDevice(h, client, started.device_code);
        assert.equal(pending.statusCode, 400);
        assert.equal(body(pending).error, 'authorization_pending');

        // The user types it in lower case, without the dash.
        const page = await browser.get('/device');
        assert.equal(page.statusCode, 200);
        assert.match(page.body, /Only enter a code that a device or program/);
        const confirm = await browser.post('/device', {
          _csrf: csrfOf(page.body),
          user_code: started.user_code.replace('-', '').toLowerCase(),
        });
        assert.equal(confirm.statusCode, 200, confirm.body);
        assert.match(
          confirm.body,
          /Know who you are: your user id and\s+username\.\s*<span class="muted">\(openid, profile\)/,
        );
        assert.match(confirm.body, /Read your private account information/);
        const allowed = await browser.post('/device/decide', {
          ...hiddenFieldsOf(confirm.body),
          decision: 'allow',
        });
        assert.equal(allowed.statusCode, 200, allowed.body);
        assert.match(allowed.body, /Device signed in/);

        now += 5;
        const done = await pollDevice(h, client, started.device_code);
        assert.equal(done.statusCode, 200, done.body);
        const tokens = body(done) as Record<string, string>;
        assert.equal(tokens.scope, 'openid profile read_confidential');
        assert.ok(tokens.refresh_token);
        const self = await h.api({
          method: 'GET',
          path: '/tokens/self',
          headers: { authorization: `Bearer ${tokens.access_token}` },
        });
        assert.equal(self.statusCode, 200, self.body);
        assert.equal(body(self).user_id, user.id);
        assert.equal(body(self).privileges, 2);
        const claims = await verifyIdToken(h, tokens.id_token as string, {
          issuer: 'http://localhost',
          audience: client.id,
          currentDate: new Date(now * 1000),
        });
        assert.equal(claims.sub, String(user.id));
        assert.equal(claims.preferred_username, user.username);

        // Used once: the next poll is invalid_grant, and the tokens stay good.
        now += 5;
        const again = await pollDevice(h, client, started.device_code);
        assert.equal(again.statusCode, 400);
        assert.equal(body(again).error, 'invalid_grant');
        const still = await h.api({
          method: 'GET',
          path: '/tokens/self',
          headers: { authorization: `Bearer ${tokens.access_token}` },
        });
        assert.equal(still.statusCode, 200);

        const kinds = (await listEvents(h.store.db, { userId: user.id, limit: 20 })).map((e) => e.kind);
        assert.ok(kinds.includes('device.approved'), kinds.join());
        assert.ok(kinds.includes('device.signed_in'), kinds.join());
      });

    it('attack: an approved device is listed among the user’s applications at once, as approved by them, with what it may do', async (t) => {
      let now = nowSeconds();
      const { h, client, browser } = await setup(t, { public: true, clock: () => now });
      const started = await start(h, client, 'write read_confidential');
      const page = await browser.get('/device');
      const confirm = await browser.post('/device', {
        _csrf: csrfOf(page.body),
        user_code: started.user_code,
      });
      assert.equal(confirm.statusCode, 200, confirm.body);
      const allowed = await browser.post('/device/decide', {
        ...hiddenFieldsOf(confirm.body),
        decision: 'allow',
      });
      assert.match(allowed.body, /Device signed in/);

      const listed = (await browser.get('/tokens')).body;
      const name = (
        await h.store.db
          .selectFrom('oauth_clients')
          .select('name')
          .where('id', '=', client.id)
          .executeTakeFirstOrThrow()
      ).name;
      assert.ok(listed.includes(name), 'listed before the device collected its tokens');
      assert.ok(
        !listed.includes('Access given by the server’s operator'),
        'not shown as an operator’s grant',
      );
      const approval = await h.store.db
        .selectFrom('oauth_consents')
        .select('scope')
        .where('client_id', '=', client.id)
        .executeTakeFirstOrThrow();
      assert.equal(approval.scope, 'read_confidential write');

      now += 5;
      assert.equal((await pollDevice(h, client, started.device_code)).statusCode, 200);
      const after = (await browser.get('/tokens')).body;
      assert.ok(after.includes(name));
      assert.ok(!after.includes('Access given by the server’s operator'));
    });

    it('slow_down: a poll before the interval is up raises it by 5 seconds', async (t) => {
      let now = nowSeconds();
      const { h, client } = await setup(t, { clock: () => now });
      const started = await start(h, client);
      assert.equal(body(await pollDevice(h, client, started.device_code)).error, 'authorization_pending');
      now += 2;
      const fast = await pollDevice(h, client, started.device_code);
      assert.equal(fast.statusCode, 400);
      assert.equal(body(fast).error, 'slow_down');
      assert.match(String(body(fast).error_description), /wait 10 seconds/);
      now += 6; // 6 s after the too-fast poll: within the new 10-second interval
      assert.equal(body(await pollDevice(h, client, started.device_code)).error, 'slow_down');
      now += 15;
      assert.equal(body(await pollDevice(h, client, started.device_code)).error, 'authorization_pending');
    });

    it('access_denied once the user denies; expired_token once the code has expired (the test’s clock)', async (t) => {
      let now = nowSeconds();
      const { h, user, client, browser } = await setup(t, { clock: () => now });
      const denied = await start(h, client);
      const page = await decideOnDevicePage(browser, denied.user_code, 'deny');
      assert.equal(page.statusCode, 200);
      assert.match(page.body, /Sign-in denied/);
      const refused = await pollDevice(h, client, denied.device_code);
      assert.equal(refused.statusCode, 400);
      assert.equal(body(refused).error, 'access_denied');
      assert.ok(
        (await listEvents(h.store.db, { userId: user.id, kind: 'device.denied', limit: 5 })).length === 1,
      );

      const late = await start(h, client);
      now += DEVICE_CODE_TTL_S;
      const expired = await pollDevice(h, client, late.device_code);
      assert.equal(expired.statusCode, 400);
      assert.equal(body(expired).error, 'expired_token');
      // Too late to approve it too.
      const tooLate = await browser.get('/device');
      const entered = await browser.post('/device', {
        _csrf: csrfOf(tooLate.body),
        user_code: late.user_code,
      });
      assert.equal(entered.statusCode, 400);
      assert.match(entered.body, /not valid, or it has expired/);
    });

    it('refuses another client’s device code, a confidential client without its secret, and an unknown code', async (t) => {
      const { h, owner, client } = await setup(t);
      const other = await registerClient(h, { ownerId: owner.id });
      const started = await start(h, client);
      const stolen = await pollDevice(h, other, started.device_code);
      assert.equal(body(stolen).error, 'invalid_grant');
      const noSecret = await startDevice(h, { ...client, secret: undefined });
      assert.equal(noSecret.statusCode, 401);
      assert.equal(body(noSecret).error, 'invalid_client');
      assert.equal(body(await pollDevice(h, client, 'x'.repeat(43))).error, 'invalid_grant');
      // The code is still the rightful client's.
      assert.equal(body(await pollDevice(h, client, started.device_code)).error, 'authorization_pending');
      const unknownScope = await startDevice(h, client, 'admin');
      assert.equal(body(unknownScope).error, 'invalid_scope');
    });

    it('approving needs sudo mode and the form’s CSRF token', async (t) => {
      const { h, user, client, browser } = await setup(t);
      const started = await start(h, client);
      await leaveSudoMode(h, user.id);
      const asked = await decideOnDevicePage(browser, started.user_code, 'allow');
      assert.equal(asked.statusCode, 403);
      assert.match(asked.body, /Enter your password to allow this device/);
      assert.equal(body(await pollDevice(h, client, started.device_code)).error, 'authorization_pending');
      const withPassword = await browser.post('/device/decide', {
        ...hiddenFieldsOf(asked.body),
        decision: 'allow',
        confirm_password: user.password,
      });
      assert.equal(withPassword.statusCode, 200, withPassword.body);

      const second = await start(h, client);
      const forged = await browser.post('/device/decide', { user_code: second.user_code, decision: 'allow' });
      assert.equal(forged.statusCode, 403);
      assert.equal(body(await pollDevice(h, client, second.device_code)).error, 'authorization_pending');

      // Not signed in: the page sends the browser to sign in and back, the code kept.
      const stranger = await new InjectBrowser(h.app).get(`/device?user_code=${second.user_code}`);
      assert.equal(stranger.statusCode, 303);
      assert.equal(
        stranger.headers.location,
        `/login?next=${encodeURIComponent(`/device?user_code=${second.user_code}`)}`,
      );
    });

    it('attack: guessing user codes hits its limit; a wrong code is logged; a right one spends no try', async (t) => {
      const { h, user, client, browser } = await setup(t);
      const started = await start(h, client);
      const page = await browser.get('/device');
      const csrf = csrfOf(page.body);
      // A right code gives its try back.
      assert.equal(
        (await browser.post('/device', { _csrf: csrf, user_code: started.user_code })).statusCode,
        200,
      );
      for (let i = 0; i < USER_CODE_TRIES_PER_USER; i++) {
        const guess = await browser.post('/device', {
          _csrf: csrf,
          user_code: `BBBB-BBB${USER_CODE_ALPHABET[i]}`,
        });
        assert.equal(guess.statusCode, 400, `guess ${i}`);
      }
      const limited = await browser.post('/device', { _csrf: csrf, user_code: started.user_code });
      assert.equal(limited.statusCode, 429);
      assert.ok(Number(limited.headers['retry-after']) > 0);
      assert.match(limited.body, /Too many codes tried/);
      // Something that cannot be a code is told so, and spends nothing.
      const typo = await browser.post('/device', { _csrf: csrf, user_code: 'A1B2-C3D4' });
      assert.equal(typo.statusCode, 400);
      const refused = await listEvents(h.store.db, {
        userId: user.id,
        kind: 'device.code_refused',
        limit: 20,
      });
      assert.equal(refused.length, USER_CODE_TRIES_PER_USER);
      assert.equal(body(await pollDevice(h, client, started.device_code)).error, 'authorization_pending');
    });

    it('bounds a user’s approved codes not yet exchanged per application, the oldest ending', async (t) => {
      let now = nowSeconds();
      const { h, client, browser } = await setup(t, { clock: () => now });
      const max = h.config.oauthGrants.perClient;
      const codes: Started[] = [];
      for (let i = 0; i <= max; i++) {
        now += 1; // codes of one second have no order among themselves
        const started = await start(h, client);
        assert.equal((await decideOnDevicePage(browser, started.user_code, 'allow')).statusCode, 200);
        codes.push(started);
      }
      const oldest = await pollDevice(h, client, codes[0]!.device_code);
      assert.equal(body(oldest).error, 'invalid_grant', oldest.body);
      assert.equal((await pollDevice(h, client, codes[max]!.device_code)).statusCode, 200);
    });

    it('attack: an approved code dies with sign out everywhere, and a suspended application gets no code', async (t) => {
      const { h, owner, user, client, browser } = await setup(t);
      const started = await start(h, client);
      assert.equal((await decideOnDevicePage(browser, started.user_code, 'allow')).statusCode, 200);
      const { endGrantsOfUser } = await import('../../src/oauth/applications.ts');
      await endGrantsOfUser(h.store.db, user.id);
      assert.equal(body(await pollDevice(h, client, started.device_code)).error, 'invalid_grant');
      await h.setUserPrivileges(owner.id, 0);
      const suspended = await startDevice(h, client);
      assert.equal(body(suspended).error, 'unauthorized_client');
    });
  });
}
