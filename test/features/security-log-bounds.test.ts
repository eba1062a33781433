// What no one can do to the security log, black-box on every backend: grow it without bound (a signed-in
// user regenerating a token in a loop; many addresses trying one account's password), write in it text of
// their choosing that reads like a message from the server (a User-Agent is shown as the browser and
// system it names), or learn an administrator's address, browser or token from it (the user's page says
// "an administrator"; `tokend audit` keeps the details).
import { describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { DIALECTS } from '../helpers/dialects.ts';
import { build, body, ACTIVE, type Harness } from '../helpers/app.ts';
import { InjectBrowser, csrfOf } from '../helpers/inject-browser.ts';
import { nowSeconds } from '../../src/auth/clock.ts';
import { TokenPrivilege, UserPrivilege } from '../../src/auth/privileges.ts';
import { FIX_PRIVILEGES_NEEDS } from '../../src/tokens/routes.ts';
import {
  FAILED_SIGN_INS_PER_ACCOUNT,
  FAILED_SIGN_INS_PER_WINDOW,
  FAILED_SIGN_IN_WINDOW_S,
  MORE_FAILED_SIGN_INS,
  actOutsideRequest,
  listEvents,
  type LoggedEvent,
} from '../../src/auth/security-log.ts';
import { setUserPrivileges } from '../../src/users/repository.ts';

const ATTACKER_AGENT = 'Security notice: your account is locked, call +1-555-0100/1.0 (support)';
const ADMIN_AGENT = 'AdminConsole/1.0 (admin-laptop.corp.internal)';
const CHROME_ON_LINUX =
  'Mozilla/5.0 (X11; Linux x86_64) AppleWebKit/537.36 (KHTML, like Gecko) Chrome/120.0.0.0 Safari/537.36';
const ADMIN =
  ACTIVE |
  UserPrivilege.AdminAccessRAP |
  UserPrivilege.AdminManageUsers |
  UserPrivilege.AdminBanUsers |
  UserPrivilege.AdminManageServer;

const logOf = async (h: Harness, userId: number): Promise<LoggedEvent[]> =>
  (await listEvents(h.store.db, { userId, limit: 100_000 })).reverse();

/** The events table of the security log page. */
const tableOf = (page: string): string => page.slice(Math.max(0, page.indexOf('<tbody')));

/** The start of a window of the failed sign-ins' bound, plus a little: a flood stays in one window. */
const inOneWindow = () => Math.floor(nowSeconds() / FAILED_SIGN_IN_WINDOW_S) * FAILED_SIGN_IN_WINDOW_S + 5;

for (const dialect of DIALECTS)
  describe(`the security log's bounds (${dialect})`, () => {
    it('bounds regenerations on the token page per user (TOKEN_CREATE_RATE_LIMIT, default 60 an hour): 429 with Retry-After', async (t) => {
      const h = await build(t, dialect);
      const alice = await h.createUser();
      const browser = new InjectBrowser(h.app);
      await browser.signIn(alice);
      const made = await h.api({
        method: 'POST',
        path: '/tokens',
        payload: { username: alice.username, password: alice.password, description: 'looped' },
      });
      let id = (
        await h.api({
          method: 'GET',
          path: '/tokens/self',
          headers: { 'x-ripple-token': body(made).token as string },
        })
      ).json().id as number;
      const before = (await logOf(h, alice.id)).length;
      const page = await browser.get(`/tokens/${id}/regenerate`);
      const csrf = csrfOf(page.body);
      const statuses: number[] = [];
      let refusal = '';
      let retryAfter: string | undefined;
      // The flood of the review: 300 regenerations at once. The API's creation counts against the same
      // budget: it made the first token.
      for (let i = 0; i < 300; i++) {
        const r = await browser.post(`/tokens/${id}/regenerate`, { _csrf: csrf });
        statuses.push(r.statusCode);
        if (r.statusCode === 303) id = Number(/created=(\d+)/.exec(r.headers.location as string)?.[1]);
        else if (refusal === '') {
          refusal = r.body;
          retryAfter = r.headers['retry-after'] as string | undefined;
        }
      }
      assert.equal(statuses.filter((s) => s === 303).length, 59);
      assert.deepEqual([...new Set(statuses.slice(59))], [429]);
      assert.match(
        refusal,
        /You have made too many tokens recently\. Try again in [^;<]+; nothing was changed\./,
      );
      assert.ok(Number(retryAfter) > 0 && Number(retryAfter) <= 3600, `Retry-After: ${retryAfter}`);
      // Two rows a regeneration (the old revoked, the new made), only for those made.
      assert.equal((await logOf(h, alice.id)).length - before, 59 * 2);
      // The token regenerated last still works; nothing else was made.
      const live = await h.store.db
        .selectFrom('tokens')
        .select('id')
        .where('user_id', '=', alice.id)
        .where('session', '=', 0)
        .execute();
      assert.deepEqual(
        live.map((r) => r.id),
        [id],
      );
      // The API refuses as well, after the password check, with the envelope.
      const api = await h.api({
        method: 'POST',
        path: '/tokens',
        payload: { username: alice.username, password: alice.password },
      });
      assert.equal(api.statusCode, 429);
      assert.match(
        body(api).message as string,
        /too many tokens recently \(TOKEN_CREATE_RATE_LIMIT\): try again in \d+ seconds\. No token was created\./,
      );
      assert.ok(Number(api.headers['retry-after']) > 0);
      // Someone without the password cannot spend it: a wrong password is still the spec's 403.
      const wrong = await h.api({
        method: 'POST',
        path: '/tokens',
        payload: { username: alice.username, password: 'nope' },
      });
      assert.equal(wrong.statusCode, 403);
    });

    it('bounds token creation through the API per user across addresses, and leaves normal use as the spec says', async (t) => {
      const h = await build(t, dialect, { TOKEN_CREATE_RATE_LIMIT: '3', TOKEN_CREATE_RATE_WINDOW_S: '600' });
      const alice = await h.createUser();
      const create = (address: string) =>
        h.api({
          method: 'POST',
          path: '/tokens',
          remoteAddress: address,
          payload: { username: alice.username, password: alice.password },
        });
      for (const address of ['192.0.2.1', '192.0.2.2', '192.0.2.3'])
        assert.equal((await create(address)).statusCode, 200);
      const refused = await create('192.0.2.4');
      assert.equal(refused.statusCode, 429);
      assert.ok(Number(refused.headers['retry-after']) > 0 && Number(refused.headers['retry-after']) <= 600);
      assert.equal(
        (await h.store.db.selectFrom('tokens').select('id').where('user_id', '=', alice.id).execute()).length,
        3,
      );
      // Another user is not held back.
      const bob = await h.createUser();
      const bobs = await h.api({
        method: 'POST',
        path: '/tokens',
        payload: { username: bob.username, password: bob.password },
      });
      assert.equal(bobs.statusCode, 200);
      // With the defaults, the spec's own login limit (5 per user and address per minute) answers first.
      const d = await build(t, dialect);
      const carol = await d.createUser();
      const codes: number[] = [];
      for (let i = 0; i < 6; i++)
        codes.push(
          (
            await d.api({
              method: 'POST',
              path: '/tokens',
              payload: { username: carol.username, password: carol.password },
            })
          ).statusCode,
        );
      assert.deepEqual(codes, [200, 200, 200, 200, 200, 429]);
    });

    it("bounds one account's failed sign-ins from many addresses, and shows a user agent only as what it names", async (t) => {
      const now = inOneWindow();
      const h = await build(t, dialect, {}, { clock: () => now });
      const victim = await h.createUser();
      // The review's flood: 200 addresses × 21 wrong passwords, each with the attacker's User-Agent.
      // (Fewer on the servers, whose run is slower: the bound is the same.)
      const addresses = dialect === 'sqlite' ? 200 : 30;
      const tries = dialect === 'sqlite' ? 21 : 3;
      for (let a = 0; a < addresses; a++)
        for (let i = 0; i < tries; i++) {
          const r = await h.api({
            method: 'POST',
            path: '/tokens',
            remoteAddress: `198.18.${a >> 8}.${a & 255}`,
            headers: { 'user-agent': ATTACKER_AGENT },
            payload: { username: victim.username, password: `guess-${a}-${i}` },
          });
          assert.ok([403, 429].includes(r.statusCode), String(r.statusCode));
        }
      const log = await logOf(h, victim.id);
      assert.equal(log.length, FAILED_SIGN_INS_PER_ACCOUNT + 1, 'rows left by the flood');
      // What the summary counts: every failure the per-address cap let through (20 of each address).
      const counted = addresses * Math.min(tries, FAILED_SIGN_INS_PER_WINDOW);
      const summary = log[log.length - 1]!;
      assert.deepEqual(
        [summary.kind, summary.detail, summary.repeats, summary.address, summary.user_agent],
        ['signin.failed', MORE_FAILED_SIGN_INS, counted - FAILED_SIGN_INS_PER_ACCOUNT, null, null],
      );
      // `tokend audit` keeps what the client sent; the page shows what it names, marked as its claim.
      assert.equal(log[0]!.user_agent, ATTACKER_AGENT);
      const browser = new InjectBrowser(h.app);
      await browser.signIn(victim);
      const page = tableOf((await browser.get('/security-log')).body);
      assert.ok(!page.includes('Security notice'), 'the attacker’s words are not on the page');
      assert.ok(!page.includes('555-0100'));
      assert.ok(page.includes('an unrecognised program'));
      assert.match(
        page,
        new RegExp(`${counted - FAILED_SIGN_INS_PER_ACCOUNT} more attempts in the 10 minutes after this one`),
      );
      assert.match((await browser.get('/security-log')).body, /Browser \(as reported\)/);
      // A real browser's user agent reads as the browser and its system.
      const second = new InjectBrowser(h.app);
      const other = await h.createUser();
      const login = await second.get('/login');
      await second.request({
        method: 'POST',
        url: '/login',
        headers: { 'content-type': 'application/x-www-form-urlencoded', 'user-agent': CHROME_ON_LINUX },
        payload: new URLSearchParams({
          _csrf: csrfOf(login.body),
          username: other.username,
          password: other.password,
        }).toString(),
      });
      const theirs = tableOf((await second.get('/security-log')).body);
      assert.ok(theirs.includes('Chrome on Linux'), theirs);
      assert.ok(!theirs.includes('AppleWebKit'));
    });

    it('shows the target of an administrator’s act "an administrator", never their address, browser or token', async (t) => {
      const h = await build(t, dialect);
      const admin = await h.createUser({ privileges: ADMIN });
      const bob = await h.createUser();
      const made = await h.api({
        method: 'POST',
        path: '/tokens',
        payload: {
          username: admin.username,
          password: admin.password,
          privileges: FIX_PRIVILEGES_NEEDS | TokenPrivilege.Write,
        },
      });
      const adminToken = body(made).token as string;
      const adminTokenId = (
        await h.api({ method: 'GET', path: '/tokens/self', headers: { 'x-ripple-token': adminToken } })
      ).json().id as number;
      // Bob holds a token beyond his privileges (stored before a demotion): fix_privileges rewrites it.
      await h.createToken(bob.id, { privileges: TokenPrivilege.ManageUser });
      const fixed = await h.api({
        method: 'POST',
        path: `/tokens/fix_privileges?id=${bob.id}`,
        remoteAddress: '192.0.2.77',
        headers: { 'x-ripple-token': adminToken, 'user-agent': ADMIN_AGENT },
      });
      assert.equal(fixed.statusCode, 200, fixed.body);
      await h.app.tokend.jobs.idle();
      // The operator's command, too.
      await setUserPrivileges(
        h.store.db,
        bob.id,
        ACTIVE,
        ACTIVE,
        actOutsideRequest('cli', nowSeconds(), h.app.tokend.events),
      );
      const browser = new InjectBrowser(h.app);
      await browser.signIn(bob);
      const page = tableOf((await browser.get('/security-log')).body);
      const rows = page.split('</tr>').filter((row) => row.includes('>Privileges changed<'));
      assert.equal(rows.length, 2, page);
      for (const row of rows) {
        assert.match(row, /data-label="By">an administrator</);
        for (const secret of [
          '192.0.2.77',
          'AdminConsole',
          'admin-laptop',
          `token ${adminTokenId}`,
          'an unrecognised program',
        ])
          assert.ok(!row.includes(secret), `${secret} is on the page`);
      }
      // The user's own acts still show their details.
      assert.match(page, /data-label="By">this website</);
      // tokend audit keeps who it was, from where, with what.
      const fix = (await logOf(h, bob.id)).find((e) => e.kind === 'privileges.changed' && e.means === 'api')!;
      assert.deepEqual(
        [fix.actor_id, fix.means_id, fix.address, fix.user_agent],
        [admin.id, String(adminTokenId), '192.0.2.77', ADMIN_AGENT],
      );
    });
  });
