// Editing a token on the token page (its description and privileges, within the owner's, under the same
// secret, in sudo mode, logged), and regenerating one with a new expiry; on every backend.
import { describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { DIALECTS } from '../helpers/dialects.ts';
import { build, body, type Harness } from '../helpers/app.ts';
import { csrfOf, leaveSudoMode, signedInUser } from '../helpers/inject-browser.ts';
import { TokenPrivilege } from '../../src/auth/privileges.ts';
import { listEvents } from '../../src/auth/security-log.ts';
import { nowSeconds } from '../../src/auth/clock.ts';

const self = (h: Harness, secret: string) =>
  h.api({ method: 'GET', path: '/tokens/self', headers: { 'x-ripple-token': secret } });

const DAY = 86_400;

for (const dialect of DIALECTS) {
  describe(`editing a token on the token page [${dialect}]`, () => {
    it('changes its description and privileges under the same secret, and logs the change', async (t) => {
      const h = await build(t, dialect);
      const { user, browser } = await signedInUser(h);
      const token = await h.createToken(user.id, {
        description: 'score uploader',
        privileges: TokenPrivilege.ReadConfidential | TokenPrivilege.Write,
      });
      const list = await browser.get('/tokens');
      assert.match(list.body, new RegExp(`href="/tokens/${token.id}/edit"`));
      const page = await browser.get(`/tokens/${token.id}/edit`);
      assert.equal(page.statusCode, 200);
      assert.match(page.body, new RegExp(`<form method="post" action="/tokens/${token.id}/edit"`));
      assert.match(page.body, /value="score uploader"/);
      assert.match(page.body, /value="ReadConfidential"\s+checked/);
      assert.match(page.body, /value="Write"\s+checked/);

      const done = await browser.post(`/tokens/${token.id}/edit`, {
        _csrf: csrfOf(page.body),
        description: 'read-only stats',
        privileges: 'ReadConfidential',
      });
      assert.equal(done.statusCode, 303, done.body);
      assert.equal(done.headers.location, '/tokens?edited=1');
      assert.match((await browser.get('/tokens?edited=1')).body, /The token was changed\./);
      const now = body(await self(h, token.secret));
      assert.equal(now.id, token.id);
      assert.equal(now.description, 'read-only stats');
      assert.equal(now.privileges, TokenPrivilege.ReadConfidential);
      const events = (await listEvents(h.store.db, { userId: user.id, limit: 10 })).filter(
        (e) => e.kind === 'token.edited',
      );
      assert.equal(events.length, 1);
      assert.equal(events[0]!.token_id, token.id);
      assert.equal(events[0]!.detail, 'description; privileges 6 → 2 (ReadConfidential)');
    });

    it('attack: refuses privileges the user may not give, a description the rules refuse, another’s token, no sudo', async (t) => {
      const h = await build(t, dialect);
      const { user, browser } = await signedInUser(h);
      const token = await h.createToken(user.id, {
        description: 'keep',
        privileges: TokenPrivilege.ReadConfidential,
      });
      const page = await browser.get(`/tokens/${token.id}/edit`);
      const csrf = csrfOf(page.body);
      const forged = await browser.post(`/tokens/${token.id}/edit`, {
        _csrf: csrf,
        description: 'keep',
        privileges: 'ManageUser',
      });
      assert.equal(forged.statusCode, 400);
      assert.match(forged.body, /cannot give a token these privileges: ManageUser/);
      const lookAlike = await browser.post(`/tokens/${token.id}/edit`, {
        _csrf: csrf,
        description: 'pay\u202Egnp.exe',
        privileges: 'ReadConfidential',
      });
      assert.equal(lookAlike.statusCode, 400);
      assert.match(lookAlike.body, /The description /);

      const other = await h.createUser();
      const theirs = await h.createToken(other.id, { description: 'theirs' });
      assert.equal((await browser.get(`/tokens/${theirs.id}/edit`)).statusCode, 404);
      const onTheirs = await browser.post(`/tokens/${theirs.id}/edit`, {
        _csrf: csrf,
        description: 'mine now',
      });
      assert.equal(onTheirs.statusCode, 404);

      await leaveSudoMode(h, user.id);
      const noPassword = await browser.post(`/tokens/${token.id}/edit`, {
        _csrf: csrf,
        description: 'changed',
        privileges: 'ReadConfidential',
      });
      assert.equal(noPassword.statusCode, 403);
      assert.match(noPassword.body, /name="confirm_password"/);
      assert.equal(
        (await browser.post(`/tokens/${token.id}/edit`, { description: 'x' })).statusCode,
        403,
        'no CSRF token',
      );

      assert.deepEqual(
        [body(await self(h, token.secret)).description, body(await self(h, theirs.secret)).description],
        ['keep', 'theirs'],
      );
    });
  });

  describe(`regenerating a token with a new expiry [${dialect}]`, () => {
    it('keeps the expiry by default, or takes a new one from the list or a date; a bad date changes nothing', async (t) => {
      const h = await build(t, dialect);
      const { user, browser } = await signedInUser(h);
      const first = await h.createToken(user.id, { description: 'bot' });
      const page = await browser.get(`/tokens/${first.id}/regenerate`);
      assert.match(page.body, /<option value="keep" selected>As now: never<\/option>/);
      const csrf = csrfOf(page.body);

      const bad = await browser.post(`/tokens/${first.id}/regenerate`, {
        _csrf: csrf,
        expires_in: 'custom',
        expires_on: '2001-01-01',
      });
      assert.equal(bad.statusCode, 400);
      assert.match(bad.body, /that one has passed/);
      assert.equal((await self(h, first.secret)).statusCode, 200, 'nothing changed');

      const week = await browser.post(`/tokens/${first.id}/regenerate`, {
        _csrf: csrf,
        expires_in: String(7 * DAY),
      });
      assert.equal(week.statusCode, 303, week.body);
      const secondId = Number(/created=(\d+)/.exec(String(week.headers.location))?.[1]);
      const second = await h.store.db
        .selectFrom('tokens')
        .select('expires_at')
        .where('id', '=', secondId)
        .executeTakeFirstOrThrow();
      const expiresAt = Number(second.expires_at);
      assert.ok(Math.abs(expiresAt - (nowSeconds() + 7 * DAY)) <= 5, String(expiresAt));

      // Kept by default (no choice sent, as the form before this one), then set to never.
      const kept = await browser.post(`/tokens/${secondId}/regenerate`, { _csrf: csrf });
      const thirdId = Number(/created=(\d+)/.exec(String(kept.headers.location))?.[1]);
      const third = await h.store.db
        .selectFrom('tokens')
        .select('expires_at')
        .where('id', '=', thirdId)
        .executeTakeFirstOrThrow();
      assert.equal(Number(third.expires_at), expiresAt);
      const never = await browser.post(`/tokens/${thirdId}/regenerate`, { _csrf: csrf, expires_in: '' });
      const fourthId = Number(/created=(\d+)/.exec(String(never.headers.location))?.[1]);
      const fourth = await h.store.db
        .selectFrom('tokens')
        .select('expires_at')
        .where('id', '=', fourthId)
        .executeTakeFirstOrThrow();
      assert.equal(fourth.expires_at, null);
    });
  });
}
