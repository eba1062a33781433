// The security log, black-box on every backend: each kind of event appears once, with its fields, after
// the act that makes it — in the table, on the user's page, in `tokend audit --json` and (revocations,
// privilege changes) on the Redis events channel as a subscriber sees it; no secret, password or hash
// anywhere in any of them; another user's log is never shown; a flood of failed sign-ins from one
// address leaves a bounded number of rows; an unreachable Redis never fails a revocation.
import { describe, it, before, type TestContext } from 'node:test';
import assert from 'node:assert/strict';
import { Redis } from 'ioredis';
import { DIALECTS } from '../helpers/dialects.ts';
import { build, body, ACTIVE, WITH_METRICS, scrapeMetrics, type Harness } from '../helpers/app.ts';
import { FORM, InjectBrowser, csrfOf, form as formBody, newSecretOf } from '../helpers/inject-browser.ts';
import {
  backChannel,
  exchangeCode,
  obtainCode,
  obtainTokens,
  pkcePair,
  registerClient,
} from '../helpers/oauth.ts';
import { runCli } from '../helpers/cli.ts';
import { REDIS_URL, redisSkipReason, uniqueRedisPrefix } from '../helpers/redis.ts';
import { eventually } from '../helpers/waiting.ts';
import { nowSeconds } from '../../src/auth/clock.ts';
import { hashTokenSecret } from '../../src/auth/secret.ts';
import { TokenPrivilege, UserPrivilege } from '../../src/auth/privileges.ts';
import { FIX_PRIVILEGES_NEEDS } from '../../src/tokens/routes.ts';
import {
  FAILED_SIGN_INS_PER_ACCOUNT,
  FAILED_SIGN_INS_PER_WINDOW,
  MORE_FAILED_SIGN_INS,
  actOutsideRequest,
  listEvents,
  recordEvent,
  withEvents,
  type LoggedEvent,
} from '../../src/auth/security-log.ts';
import { recordTokenUses } from '../../src/auth/last-used.ts';
import { OUTBOX_MAX_AGE_S, waitingEvents } from '../../src/auth/event-outbox.ts';
import { TcpProxy } from '../helpers/real-server.ts';

const AGENT = 'SecurityLogTest/1.0 (a test client)';
const SUDO_WINDOW_S = 900;
/** Alice may make tokens that run fix_privileges (ManageUser and APIMeta), but not ManageRoles. */
const ALICE =
  ACTIVE |
  UserPrivilege.AdminAccessRAP |
  UserPrivilege.AdminManageUsers |
  UserPrivilege.AdminBanUsers |
  UserPrivilege.AdminManageServer;
/** Until it waits for: `test` passes within ~5 s. */
const until = async (what: string, test: () => boolean) =>
  assert.ok(await eventually(100, 50, async () => test()), what);
/** The events table of a security log page (the filter's list names every kind too). */
const tableOf = (page: string): string => {
  const at = page.indexOf('<tbody');
  return at < 0 ? '' : page.slice(at);
};

/** A subscriber of the events channel: every message it has received, parsed. */
async function subscribe(t: TestContext, prefix: string): Promise<Array<Record<string, unknown>>> {
  const subscriber = new Redis(REDIS_URL);
  t.after(() => subscriber.disconnect());
  const received: Array<Record<string, unknown>> = [];
  subscriber.on('message', (_channel: string, message: string) => {
    received.push(JSON.parse(message) as Record<string, unknown>);
  });
  await subscriber.subscribe(`${prefix}events`);
  return received;
}

/** The user's events, oldest first. */
async function logOf(h: Harness, userId: number): Promise<LoggedEvent[]> {
  return (await listEvents(h.store.db, { userId, limit: 100_000 })).reverse();
}

/** The one event of `kind` (and detail, when given) in `log`: fails unless there is exactly one. */
function one(log: readonly LoggedEvent[], kind: string, detail?: string | null): LoggedEvent {
  const found = log.filter((e) => e.kind === kind && (detail === undefined || e.detail === detail));
  assert.equal(found.length, 1, `one ${kind} ${detail ?? ''} event: ${JSON.stringify(log, null, 1)}`);
  return found[0]!;
}

/** The act of an operator's command on the app's events sink. */
const requestlessAct = (h: Harness) => actOutsideRequest('cli', nowSeconds(), h.app.tokend.events);

const apiCreate = (h: Harness, fields: Record<string, unknown>) =>
  h.api({ method: 'POST', path: '/tokens', headers: { 'user-agent': AGENT }, payload: fields });

for (const dialect of DIALECTS) {
  describe(`security log (${dialect})`, () => {
    let skip: string | undefined;
    before(async () => {
      skip = await redisSkipReason();
    });

    it('records each kind of event once, shows it on the page, in tokend audit and on Redis, never a secret', async (t) => {
      if (skip) return t.skip(skip);
      const prefix = uniqueRedisPrefix();
      let now = nowSeconds();
      const h = await build(
        t,
        dialect,
        {
          REDIS_URL,
          REDIS_KEY_PREFIX: prefix,
          SUDO_WINDOW_S: String(SUDO_WINDOW_S),
          LOGIN_RATE_LIMIT: '1000',
          LOGIN_IP_RATE_LIMIT: '100000',
          ...WITH_METRICS,
        },
        { clock: () => now },
      );
      const received = await subscribe(t, prefix);
      const alice = await h.createUser({ privileges: ALICE });
      const secrets: string[] = [alice.password];

      // API token creation: the password login and the token in one event; a wrong password is refused.
      const wrong = await apiCreate(h, { username: alice.username, password: 'not-her-password' });
      assert.equal(wrong.statusCode, 403);
      secrets.push('not-her-password');
      const made = await apiCreate(h, {
        username: alice.username,
        password: alice.password,
        privileges: TokenPrivilege.Write | FIX_PRIVILEGES_NEEDS,
        description: 'writer',
      });
      assert.equal(made.statusCode, 200, made.body);
      const writer = { id: body(made).id as number, secret: body(made).token as string };
      const writerId = (
        await h.api({ method: 'GET', path: '/tokens/self', headers: { 'x-ripple-token': writer.secret } })
      ).json().id as number;
      secrets.push(writer.secret);
      const doomed = body(await apiCreate(h, { username: alice.username, password: alice.password }));
      const expiring = body(
        await apiCreate(h, { username: alice.username, password: alice.password, expires_in: 60 }),
      );
      const selfish = body(await apiCreate(h, { username: alice.username, password: alice.password }));
      secrets.push(doomed.token as string, expiring.token as string, selfish.token as string);
      const idOf = async (secret: string) =>
        (await h.api({ method: 'GET', path: '/tokens/self', headers: { 'x-ripple-token': secret } })).json()
          .id as number;
      const doomedId = await idOf(doomed.token as string);
      const expiringId = await idOf(expiring.token as string);

      // Revoked by id, and one deleting itself.
      const byId = await h.api({
        method: 'DELETE',
        path: `/tokens/${doomedId}`,
        headers: { 'x-ripple-token': writer.secret, 'user-agent': AGENT },
      });
      assert.equal(byId.statusCode, 200, byId.body);
      const selfishId = await idOf(selfish.token as string);
      const self = await h.api({
        method: 'DELETE',
        path: '/tokens/self',
        headers: { 'x-ripple-token': selfish.token as string },
      });
      assert.equal(self.statusCode, 200);

      // fix_privileges rewrites a token beyond its owner's privileges.
      const beyond = await h.createToken(alice.id, { privileges: TokenPrivilege.ManageRoles });
      secrets.push(beyond.secret);
      const fix = await h.api({
        method: 'POST',
        path: '/tokens/fix_privileges?id=self',
        headers: { 'x-ripple-token': writer.secret },
      });
      assert.equal(fix.statusCode, 200, fix.body);
      await h.app.tokend.jobs.idle();

      // The web: sign in, confirm the password after the sudo window, make and revoke a token on the page.
      const browser = new InjectBrowser(h.app);
      await browser.signIn(alice);
      secrets.push(browser.cookies.get('rt')!);
      now += SUDO_WINDOW_S + 1;
      let page = await browser.get('/tokens');
      const created = await browser.post('/tokens', {
        _csrf: csrfOf(page.body),
        description: 'from the page',
        confirm_password: alice.password,
      });
      assert.equal(created.statusCode, 303, created.body);
      const pageTokenId = Number(new URL(created.headers.location!, 'http://x').searchParams.get('created'));
      page = await browser.get(created.headers.location!);
      secrets.push(newSecretOf(page.body)!);
      const revokeForm = await browser.get(`/tokens/${pageTokenId}/revoke`);
      const revoked = await browser.post(`/tokens/${pageTokenId}/revoke`, { _csrf: csrfOf(revokeForm.body) });
      assert.equal(revoked.statusCode, 303);

      // An application authorized on the consent page, then disconnected on the token page.
      const client = await registerClient(h, { ownerId: alice.id, name: 'Logged App' });
      secrets.push(client.secret!);
      await obtainCode(browser, { client, challenge: pkcePair().challenge, scope: 'write' });
      page = await browser.get('/tokens');
      const withdraw = await browser.post(`/tokens/applications/${encodeURIComponent(client.id)}/revoke`, {
        _csrf: csrfOf(page.body),
      });
      assert.equal(withdraw.statusCode, 303, withdraw.body);

      // The expiry sweep ends the token made to expire.
      now += 120;
      await h.app.tokend.expiry.sweep();

      // The operator: a new password, new privileges (over Redis too), a token made and revoked.
      const env = { ...h.database.env, REDIS_URL, REDIS_KEY_PREFIX: prefix };
      const newPassword = 'a-new-password-for-alice';
      secrets.push(newPassword);
      for (const args of [
        ['user', 'passwd', '--user', alice.username, '--password-stdin'],
        ['user', 'set-privileges', '--user', alice.username, '--privileges', String(ACTIVE)],
        ['token', 'create', '--user', alice.username, '--description', 'by the operator'],
      ]) {
        const r = await runCli([...args, '--json'], { env, input: `${newPassword}\n` });
        assert.equal(r.code, 0, r.stderr);
        if (args[1] === 'create') secrets.push(JSON.parse(r.stdout).token as string);
      }
      const operatorToken = (await logOf(h, alice.id)).find(
        (e) => e.kind === 'token.created' && e.means === 'cli',
      )!.token_id!;
      const cliRevoke = await runCli(['token', 'revoke', '--id', String(operatorToken)], { env });
      assert.equal(cliRevoke.code, 0, cliRevoke.stderr);

      // Signed in again with the new password (the change ended the session), then out everywhere.
      const again = new InjectBrowser(h.app);
      await again.signIn({ ...alice, password: newPassword });
      page = await again.get('/tokens/sign-out-everywhere');
      const everywhere = await again.post('/tokens/sign-out-everywhere', {
        _csrf: csrfOf(page.body),
        confirm: 'yes',
      });
      assert.equal(everywhere.statusCode, 303, everywhere.body);
      // A third sign-in, signed out by its own button.
      const third = new InjectBrowser(h.app);
      await third.signIn({ ...alice, password: newPassword });
      const logout = await third.post('/logout', { _csrf: csrfOf((await third.get('/tokens')).body) });
      assert.equal(logout.statusCode, 303);

      const log = await logOf(h, alice.id);
      // Each act, once, with its means, what acted, address and user agent.
      const failed = one(log, 'signin.failed');
      assert.deepEqual([failed.means, failed.detail, failed.address], ['api', 'password', '127.0.0.1']);
      assert.equal(failed.user_agent, AGENT);
      const apiMade = one(
        log.filter((e) => e.token_id === writerId),
        'token.created',
        'password',
      );
      assert.equal(log.filter((e) => e.kind === 'token.created' && e.means === 'api').length, 4);
      assert.deepEqual([apiMade.means, apiMade.address, apiMade.user_agent], ['api', '127.0.0.1', AGENT]);
      const revokedById = one(log, 'token.revoked', 'by-id');
      assert.deepEqual(
        [revokedById.means, revokedById.means_id, revokedById.token_id],
        ['api', String(writerId), doomedId],
      );
      const selfDeleted = one(log, 'token.revoked', 'self');
      assert.deepEqual([selfDeleted.means, selfDeleted.token_id], ['api', selfishId]);
      const fixed = one(
        log,
        'privileges.changed',
        "fix_privileges: 1 tokens limited to their owner's privileges",
      );
      assert.equal(fixed.means, 'api');
      assert.equal(log.filter((e) => e.kind === 'signin.succeeded').length, 3);
      const signedIn = log.find((e) => e.kind === 'signin.succeeded')!;
      assert.deepEqual([signedIn.means, signedIn.address], ['web', '127.0.0.1']);
      assert.ok(signedIn.means_id !== null, 'the sign-in names its new session');
      const sudo = one(log, 'sudo.confirmed');
      assert.equal(sudo.means_id, signedIn.means_id);
      const pageMade = one(
        log.filter((e) => e.means === 'web'),
        'token.created',
      );
      assert.equal(pageMade.means, 'web');
      assert.equal(pageMade.token_id, pageTokenId);
      assert.equal(one(log, 'token.revoked', 'page').token_id, pageTokenId);
      const authorized = one(log, 'app.authorized');
      assert.deepEqual(
        [authorized.client_id, authorized.detail, authorized.means],
        [client.id, 'write', 'web'],
      );
      const withdrawn = one(log, 'app.withdrawn');
      assert.deepEqual([withdrawn.client_id, withdrawn.means], [client.id, 'web']);
      const expired = one(log, 'token.revoked', 'expiry');
      assert.deepEqual([expired.means, expired.token_id, expired.address], ['expiry', expiringId, null]);
      const passwd = one(log, 'password.changed', '1 sessions ended');
      assert.deepEqual([passwd.means, passwd.address], ['cli', null]);
      one(log, 'privileges.changed', `${ALICE} → ${ACTIVE}`);
      assert.equal(one(log, 'token.revoked', 'operator').token_id, operatorToken);
      const out = one(log, 'signout.everywhere');
      assert.match(out.detail ?? '', /^1 sessions, 2 API tokens, 0 OAuth tokens, 0 applications$/);
      assert.equal(one(log, 'session.ended').means, 'web');

      // Published after each commit: revocations and privilege changes, in the versioned shape, nothing
      // else; each with its own id, increasing in the order they came.
      await until('every published event', () => received.length >= 11);
      const ids = received.map((e) => e.id as number);
      assert.ok(
        ids.every((id, i) => Number.isInteger(id) && (i === 0 || id > ids[i - 1]!)),
        `${ids}`,
      );
      const kinds = received.map((e) => `${String(e.kind)}:${String(e.reason ?? '')}`).sort();
      assert.deepEqual(
        kinds,
        [
          'app.withdrawn:user',
          'password.changed:1 sessions ended',
          `privileges.changed:${ALICE} → ${ACTIVE}`,
          "privileges.changed:fix_privileges: 1 tokens limited to their owner's privileges",
          'session.ended:',
          'signout.everywhere:1 sessions, 2 API tokens, 0 OAuth tokens, 0 applications',
          'token.revoked:by-id',
          'token.revoked:expiry',
          'token.revoked:operator',
          'token.revoked:page',
          'token.revoked:self',
        ].sort(),
      );
      for (const e of received) {
        assert.equal(e.v, 1);
        assert.equal(e.user_id, alice.id);
        assert.equal(typeof e.at, 'number');
        assert.deepEqual(
          Object.keys(e).filter(
            (k) => !['v', 'id', 'kind', 'user_id', 'token_ids', 'client_id', 'reason', 'at'].includes(k),
          ),
          [],
        );
      }
      const byIdEvent = received.find((e) => e.kind === 'token.revoked' && e.reason === 'by-id')!;
      assert.deepEqual(byIdEvent.token_ids, [doomedId]);
      assert.equal(received.find((e) => e.kind === 'app.withdrawn')!.client_id, client.id);
      assert.deepEqual(
        (received.find((e) => e.kind === 'signout.everywhere')!.token_ids as number[]).sort((a, b) => a - b),
        [writerId, beyond.id].sort((a, b) => a - b),
      );
      assert.match(await scrapeMetrics(h), /^tokend_events_published_total \d+/m);

      // The page: her events, newest first, filtered by kind.
      const viewer = new InjectBrowser(h.app);
      await viewer.signIn({ ...alice, password: newPassword });
      const logPage = await viewer.get('/security-log');
      assert.equal(logPage.statusCode, 200);
      const events = tableOf(logPage.body);
      for (const label of [
        'Signed in',
        'Sign-in failed',
        'Password confirmed',
        'Token created',
        'Token revoked',
        'Signed out',
        'Application authorized',
        'Application access withdrawn',
        'Password changed',
        'Privileges changed',
        'Signed out everywhere',
      ])
        assert.ok(events.includes(`data-label="Event">${label}<`), label);
      // A user agent as what it names, never its text: this one names no browser bowser knows.
      assert.ok(!events.includes('SecurityLogTest'), 'the user agent is not shown as its text');
      assert.ok(events.includes('an unrecognised program'), 'the user agent is shown in words');
      // The address, breakable only between its groups.
      assert.ok(events.includes('<code>127.<wbr />0.<wbr />0.<wbr />1</code>'), 'the address is shown');
      assert.ok(events.indexOf('>Signed in<') < events.indexOf('>Sign-in failed<'), 'newest first');
      const onlyFailed = tableOf((await viewer.get('/security-log?kind=signin.failed')).body);
      assert.ok(onlyFailed.includes('>Sign-in failed<'));
      assert.ok(!onlyFailed.includes('>Token revoked<'));
      const badKind = await viewer.get('/security-log?kind=nonsense');
      assert.equal(badKind.statusCode, 400);
      assert.match(badKind.body, /no kind of event called/);

      // tokend audit --json: one object a line, every one of hers.
      const audit = await runCli(['audit', '--user', alice.username, '--limit', '1000', '--json'], { env });
      assert.equal(audit.code, 0, audit.stderr);
      const lines = audit.stdout
        .trim()
        .split('\n')
        .map((l) => JSON.parse(l) as LoggedEvent);
      const stored = await logOf(h, alice.id);
      assert.deepEqual(
        lines.map((e) => e.id),
        stored.map((e) => e.id).reverse(),
      );
      const auditText = await runCli(['audit', '--kind', 'token.revoked', '--since', '1970-01-02'], { env });
      assert.equal(auditText.code, 0, auditText.stderr);
      assert.equal(auditText.stdout.split('\n').filter((l) => l.includes('token.revoked')).length, 5);

      // No secret, password or hash anywhere: the table, the page, the CLI's output, the published events.
      const users = await h.store.db.selectFrom('users').select('password_hash').execute();
      const forbidden = [
        ...secrets,
        ...secrets.map(hashTokenSecret),
        ...users.map((u) => u.password_hash),
      ].filter((s) => s.length >= 8);
      const table = JSON.stringify(await h.store.db.selectFrom('security_log').selectAll().execute());
      const fullPage = (await viewer.get('/security-log')).body;
      for (const secret of forbidden)
        for (const [where, text] of [
          ['table', table],
          ['page', fullPage],
          ['audit', audit.stdout + auditText.stdout],
          ['events', JSON.stringify(received)],
        ] as const)
          assert.ok(!text.includes(secret), `${where} holds a secret`);
    });

    it("records and publishes the end of an application's grant: revoked by it, or a code presented again", async (t) => {
      if (skip) return t.skip(skip);
      const prefix = uniqueRedisPrefix();
      const h = await build(t, dialect, { REDIS_URL, REDIS_KEY_PREFIX: prefix });
      const received = await subscribe(t, prefix);
      const alice = await h.createUser();
      const client = await registerClient(h, { ownerId: alice.id, name: 'Grant App' });
      const browser = new InjectBrowser(h.app);
      await browser.signIn(alice);
      // A code exchanged, then presented again: the grant it started ends.
      const { verifier, challenge } = pkcePair();
      const code = await obtainCode(browser, { client, challenge, scope: 'write' });
      assert.equal((await exchangeCode(h, client, code, verifier)).statusCode, 200);
      assert.equal((await exchangeCode(h, client, code, verifier)).statusCode, 400);
      // Another grant, whose refresh token the application revokes itself.
      const tokens = await obtainTokens(h, browser, client, 'write');
      const revoked = await backChannel(h, '/oauth/revoke', client, {
        token: tokens.refresh_token,
        token_type_hint: 'refresh_token',
      });
      assert.equal(revoked.statusCode, 200);
      const log = await logOf(h, alice.id);
      const reused = one(log, 'grant.revoked', 'code presented again');
      assert.deepEqual([reused.means, reused.means_id, reused.client_id], ['oauth', client.id, client.id]);
      const byClient = one(log, 'grant.revoked', 'revoked by the application');
      assert.deepEqual([byClient.means, byClient.address], ['oauth', '127.0.0.1']);
      await until('both published', () => received.length >= 2);
      assert.deepEqual(received.map((e) => [e.kind, e.client_id, e.user_id, e.reason]).sort(), [
        ['grant.revoked', client.id, alice.id, 'code presented again'],
        ['grant.revoked', client.id, alice.id, 'revoked by the application'],
      ]);
      const text = JSON.stringify([log, received]);
      for (const secret of [tokens.refresh_token, tokens.access_token, code, client.secret!, verifier])
        assert.ok(!text.includes(secret));
    });

    it('records the applications page: registered, secret rotated, deleted (the last two published)', async (t) => {
      if (skip) return t.skip(skip);
      const prefix = uniqueRedisPrefix();
      const h = await build(t, dialect, { REDIS_URL, REDIS_KEY_PREFIX: prefix });
      const received = await subscribe(t, prefix);
      const owner = await h.createUser();
      const browser = new InjectBrowser(h.app);
      await browser.signIn(owner);
      const newForm = await browser.get('/applications/new');
      const made = await browser.request({
        method: 'POST',
        url: '/applications/new',
        headers: { ...FORM, 'user-agent': AGENT },
        payload: formBody({
          _csrf: csrfOf(newForm.body),
          name: 'Logged Tracker',
          redirect_uris: 'https://tracker.example/cb',
          type: 'confidential',
        }),
      });
      assert.equal(made.statusCode, 303, made.body);
      const landed = await browser.get(String(made.headers.location));
      const firstSecret = /id="client-secret"[^>]*value="([A-Za-z0-9_-]{43})"/s.exec(landed.body)?.[1];
      assert.ok(firstSecret);
      const [row] = await h.store.db
        .selectFrom('oauth_clients')
        .selectAll()
        .where('owner_id', '=', owner.id)
        .execute();
      assert.ok(row);
      const confirm = await browser.get(`/applications/${row.id}/secret`);
      const rotated = await browser.post(`/applications/${row.id}/secret`, {
        _csrf: csrfOf(confirm.body),
        end_tokens: 'yes',
      });
      assert.equal(rotated.statusCode, 303, rotated.body);
      const rotatedPage = await browser.get(String(rotated.headers.location));
      const secondSecret = /id="client-secret"[^>]*value="([A-Za-z0-9_-]{43})"/s.exec(rotatedPage.body)?.[1];
      assert.ok(secondSecret);
      const deleteForm = await browser.get(`/applications/${row.id}/delete`);
      const deleted = await browser.post(`/applications/${row.id}/delete`, {
        _csrf: csrfOf(deleteForm.body),
      });
      assert.equal(deleted.statusCode, 303, deleted.body);

      const log = await logOf(h, owner.id);
      const registeredEvent = one(log, 'app.registered');
      assert.deepEqual(
        [
          registeredEvent.means,
          registeredEvent.client_id,
          registeredEvent.address,
          registeredEvent.user_agent,
        ],
        ['web', row.id, '127.0.0.1', AGENT],
      );
      const rotatedEvent = one(log, 'app.secret_rotated', 'tokens ended');
      assert.deepEqual([rotatedEvent.means, rotatedEvent.client_id], ['web', row.id]);
      assert.deepEqual([one(log, 'app.deleted').means, one(log, 'app.deleted').client_id], ['web', row.id]);
      await until('both published', () => received.length >= 2);
      assert.deepEqual(received.map((e) => [e.kind, e.client_id, e.user_id]).sort(), [
        ['app.deleted', row.id, owner.id],
        ['app.secret_rotated', row.id, owner.id],
      ]);
      const page = (await browser.get('/security-log')).body;
      for (const label of ['Application registered', 'Application secret rotated', 'Application deleted'])
        assert.ok(tableOf(page).includes(`data-label="Event">${label}<`), label);
      const text = JSON.stringify([log, received]) + page;
      for (const secret of [firstSecret, secondSecret, owner.password, hashTokenSecret(firstSecret)])
        assert.ok(!text.includes(secret), 'no secret in the log, the page or an event');
    });

    it("shows a user only their own log, never another's", async (t) => {
      const h = await build(t, dialect);
      const alice = await h.createUser();
      const bob = await h.createUser();
      const secret = 'alice-only-agent/9.9';
      await h.api({
        method: 'POST',
        path: '/tokens',
        headers: { 'user-agent': secret },
        payload: { username: alice.username, password: alice.password },
      });
      await h.api({
        method: 'POST',
        path: '/tokens',
        headers: { 'user-agent': secret },
        payload: { username: alice.username, password: 'wrong' },
      });
      const browser = new InjectBrowser(h.app);
      await browser.signIn(bob);
      for (const url of [
        '/security-log',
        '/security-log?kind=token.created',
        '/security-log?kind=signin.failed',
      ]) {
        const r = await browser.get(url);
        assert.equal(r.statusCode, 200);
        assert.ok(!r.body.includes(secret), url);
        assert.ok(!tableOf(r.body).includes('>Token created<'), url);
        assert.ok(!tableOf(r.body).includes('>Sign-in failed<'), url);
      }
      // Paging past one of alice's ids shows nothing of hers either.
      const hers = await logOf(h, alice.id);
      const r = await browser.get(`/security-log?before=${hers[hers.length - 1]!.id + 1}`);
      assert.ok(!r.body.includes(secret));
      // Signed out, the page is the sign-in's.
      const stranger = await h.app.inject({ url: '/security-log' });
      assert.equal(stranger.statusCode, 303);
      assert.match(stranger.headers.location as string, /^\/login\?next=/);
      const badPage = await browser.get('/security-log?before=abc');
      assert.equal(badPage.statusCode, 400);
    });

    it(`records at most ${FAILED_SIGN_INS_PER_WINDOW} failed sign-ins of one address per window`, async (t) => {
      // One window of the account's bound from start to end.
      const now = Math.floor(nowSeconds() / 600) * 600 + 10;
      const h = await build(
        t,
        dialect,
        { LOGIN_RATE_LIMIT: '1000000', LOGIN_IP_RATE_LIMIT: '1000000' },
        { clock: () => now },
      );
      const alice = await h.createUser();
      for (let i = 0; i < FAILED_SIGN_INS_PER_WINDOW * 3; i++) {
        const r = await apiCreate(h, { username: alice.username, password: `wrong-${i}` });
        assert.equal(r.statusCode, 403);
      }
      const log = await logOf(h, alice.id);
      assert.equal(log.length, FAILED_SIGN_INS_PER_WINDOW);
      assert.match(log[log.length - 1]!.detail ?? '', /more from this address not recorded/);
      // Another address is not held back by the first's cap; the account's own bound then counts it.
      const bob = await h.createUser();
      const other = (username: string) =>
        h.api({
          method: 'POST',
          path: '/tokens',
          remoteAddress: '198.51.100.7',
          payload: { username, password: 'wrong-again' },
        });
      assert.equal((await other(bob.username)).statusCode, 403);
      const bobs = await logOf(h, bob.id);
      assert.deepEqual([bobs.length, bobs[0]!.address], [1, '198.51.100.7']);
      assert.equal((await other(alice.username)).statusCode, 403);
      const after = await logOf(h, alice.id);
      assert.equal(after.length, FAILED_SIGN_INS_PER_ACCOUNT + 1);
      assert.deepEqual(
        [after[after.length - 1]!.detail, after[after.length - 1]!.repeats, after[after.length - 1]!.address],
        [MORE_FAILED_SIGN_INS, 1, null],
      );
    });

    it('writes the last-used address with the batched last use and shows it on the token page', async (t) => {
      let now = nowSeconds();
      const h = await build(t, dialect, {}, { clock: () => now });
      const alice = await h.createUser();
      const made = body(
        await h.api({
          method: 'POST',
          path: '/tokens',
          payload: { username: alice.username, password: alice.password, description: 'roaming' },
        }),
      );
      now += 10;
      const use = (remoteAddress: string) =>
        h.api({
          method: 'GET',
          path: '/tokens/self',
          remoteAddress,
          headers: { 'x-ripple-token': made.token as string },
        });
      assert.equal((await use('203.0.113.9')).statusCode, 200);
      const browser = new InjectBrowser(h.app);
      await browser.signIn(alice);
      // Not yet written: the page shows the pending use's address.
      assert.match((await browser.get('/tokens')).body, /from <code>203\.0\.113\.9<\/code>/);
      await h.app.tokend.lastUsed.flush();
      const stored = await h.store.db
        .selectFrom('tokens')
        .select(['id', 'last_address'])
        .where('user_id', '=', alice.id)
        .where('session', '=', 0)
        .executeTakeFirstOrThrow();
      assert.equal(stored.last_address, '203.0.113.9');
      // An IPv6 client by its /64, as the login limits count it.
      now += 10;
      await use('2001:db8:1:2:3:4:5:6');
      await h.app.tokend.lastUsed.flush();
      assert.match((await browser.get('/tokens')).body, /from <code>2001:db8:1:2::\/64<\/code>/);
      // Two instances flushing out of order: an older use moves neither the time nor the address back.
      const { id } = stored;
      await recordTokenUses(h.store.db, [[id, now + 100, '192.0.2.50']]);
      await recordTokenUses(h.store.db, [[id, now + 50, '192.0.2.49']]);
      const newest = await h.store.db
        .selectFrom('tokens')
        .select(['last_address', 'last_updated'])
        .where('id', '=', id)
        .executeTakeFirstOrThrow();
      assert.deepEqual([newest.last_address, Number(newest.last_updated)], ['192.0.2.50', now + 100]);
    });

    it('deletes events older than SECURITY_LOG_DAYS with the periodic sweep', async (t) => {
      let now = nowSeconds();
      const h = await build(t, dialect, { SECURITY_LOG_DAYS: '7' }, { clock: () => now });
      const alice = await h.createUser();
      await apiCreate(h, { username: alice.username, password: 'wrong' });
      now += 6 * 86_400;
      await apiCreate(h, { username: alice.username, password: 'wrong-later' });
      now += 86_400 + 1;
      await h.app.tokend.expiry.sweep();
      const left = await logOf(h, alice.id);
      assert.equal(left.length, 1);
      assert.equal(left[0]!.at, now - 86_400 - 1);
    });

    it('publishes nothing of a change that rolls back, and publishes a committed one after its commit', async (t) => {
      if (skip) return t.skip(skip);
      const prefix = uniqueRedisPrefix();
      const h = await build(t, dialect, { REDIS_URL, REDIS_KEY_PREFIX: prefix });
      const received = await subscribe(t, prefix);
      const alice = await h.createUser();
      const act = requestlessAct(h);
      // A ban whose transaction fails after its event was recorded: neither the ban nor the event remain.
      await assert.rejects(
        withEvents(h.store.db, act, async (trx) => {
          await trx.updateTable('users').set({ privileges: 0 }).where('id', '=', alice.id).execute();
          await recordEvent(trx, act, { userId: alice.id, kind: 'privileges.changed', detail: '3 → 0' });
          throw new Error('the change fails after its event');
        }),
        /fails after its event/,
      );
      await h.app.tokend.events.drain();
      assert.equal(await waitingEvents(h.store.db), 0);
      assert.deepEqual(await logOf(h, alice.id), []);
      const stored = await h.store.db
        .selectFrom('users')
        .select('privileges')
        .where('id', '=', alice.id)
        .executeTakeFirstOrThrow();
      assert.equal(Number(stored.privileges), ACTIVE);
      // The same change committed: its event is published (after the commit), with an id.
      await withEvents(h.store.db, act, async (trx) => {
        await trx.updateTable('users').set({ privileges: 0 }).where('id', '=', alice.id).execute();
        await recordEvent(trx, act, { userId: alice.id, kind: 'privileges.changed', detail: '3 → 0' });
      });
      await until('the committed event', () => received.length === 1);
      assert.deepEqual(
        [received[0]!.kind, received[0]!.reason, typeof received[0]!.id],
        ['privileges.changed', '3 → 0', 'number'],
      );
      // Nothing of the rolled-back one came meanwhile.
      await h.app.tokend.events.drain();
      assert.equal(received.length, 1);
    });

    it('revokes at once while Redis is unreachable: the event waits in the outbox and goes once Redis is back', async (t) => {
      if (skip) return t.skip(skip);
      const proxy = new TcpProxy(Number(new URL(REDIS_URL).port || 6379), new URL(REDIS_URL).hostname);
      await proxy.start();
      t.after(() => proxy.close());
      const prefix = uniqueRedisPrefix();
      let now = nowSeconds();
      const h = await build(
        t,
        dialect,
        { REDIS_URL: proxy.rewrite(REDIS_URL), REDIS_KEY_PREFIX: prefix, ...WITH_METRICS },
        { clock: () => now },
      );
      const received = await subscribe(t, prefix);
      const alice = await h.createUser();
      const revokeOne = async () => {
        const made = body(await apiCreate(h, { username: alice.username, password: alice.password }));
        const r = await h.api({
          method: 'DELETE',
          path: '/tokens/self',
          headers: { 'x-ripple-token': made.token as string },
        });
        assert.equal(r.statusCode, 200);
      };
      await proxy.cut();
      await revokeOne();
      assert.equal(one(await logOf(h, alice.id), 'token.revoked', 'self').means, 'api');
      await h.app.tokend.events.drain();
      assert.equal(await waitingEvents(h.store.db), 1);
      assert.equal(received.length, 0);
      // Back: the periodic drain publishes it.
      await proxy.restore();
      await until('the waiting event was published', () => received.length === 1);
      assert.equal(received[0]!.kind, 'token.revoked');
      // Deleted from the outbox once Redis took it: just after the subscriber sees it, not before.
      assert.ok(
        await eventually(100, 50, async () => (await waitingEvents(h.store.db)) === 0),
        'the published event left the outbox',
      );
      // Away for more than a day: the sweep deletes what waited, counted as dropped.
      await proxy.cut();
      await revokeOne();
      await h.app.tokend.events.drain();
      assert.equal(await waitingEvents(h.store.db), 1);
      now += OUTBOX_MAX_AGE_S + 1;
      await h.app.tokend.expiry.sweep();
      assert.equal(await waitingEvents(h.store.db), 0);
      assert.match(await scrapeMetrics(h), /^tokend_events_dropped_total 1$/m);
    });
  });
}

describe('the subscriber example of docs/security-log.md', () => {
  let skip: string | undefined;
  before(async () => {
    skip = await redisSkipReason();
  });

  it('runs, and prints the event of a revocation', async (t) => {
    if (skip) return t.skip(skip);
    const { spawn } = await import('node:child_process');
    const { fileURLToPath } = await import('node:url');
    const prefix = uniqueRedisPrefix();
    const script = fileURLToPath(new URL('../../docs/examples/subscriber.js', import.meta.url));
    const child = spawn(process.execPath, [script], {
      env: { PATH: process.env.PATH ?? '', REDIS_URL, REDIS_KEY_PREFIX: prefix },
      cwd: fileURLToPath(new URL('../..', import.meta.url)),
    });
    t.after(() => child.kill());
    let stdout = '';
    let stderr = '';
    child.stdout.on('data', (d: Buffer) => (stdout += d.toString()));
    child.stderr.on('data', (d: Buffer) => (stderr += d.toString()));
    await until('the example subscribed', () => stderr.includes('subscribed'));
    const h = await build(t, 'sqlite', { REDIS_URL, REDIS_KEY_PREFIX: prefix });
    const alice = await h.createUser();
    const made = body(await apiCreate(h, { username: alice.username, password: alice.password }));
    await h.api({
      method: 'DELETE',
      path: '/tokens/self',
      headers: { 'x-ripple-token': made.token as string },
    });
    await until('the example printed the event', () => stdout.includes('token.revoked'));
    const event = JSON.parse(stdout.trim().split('\n')[0]!) as Record<string, unknown>;
    assert.equal(event.kind, 'token.revoked');
    assert.equal(event.user_id, alice.id);
    assert.equal(event.reason, 'self');
  });
});
