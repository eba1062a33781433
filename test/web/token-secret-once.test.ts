// A token made on the token page: the POST answers with a redirect, and the page it lands on shows the
// secret once, to the session that made it, on whichever instance serves it. A reload makes no second
// token and shows the secret no more; the secret is never in a URL, a log line or the database in clear.
import { describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { createHash } from 'node:crypto';
import { DIALECTS } from '../helpers/dialects.ts';
import { build, type Harness } from '../helpers/app.ts';
import { FORM, InjectBrowser, csrfOf, newSecretOf } from '../helpers/inject-browser.ts';
import { buildApp } from '../../src/app.ts';
import { openStore } from '../../src/store/database.ts';
import { loggerOptions } from '../../src/http/logging.ts';
import { REVEAL_TTL_S } from '../../src/web/reveal.ts';

const sha256 = (s: string) => createHash('sha256').update(s, 'utf8').digest('hex');

async function signedIn(h: Harness, user?: { id: number; username: string; password: string }) {
  const who = user ?? (await h.createUser());
  const browser = new InjectBrowser(h.app);
  await browser.signIn(who);
  return { user: who, browser };
}

/** Creates a token on the page; returns the POST's answer and the address it sends the browser to. */
async function create(browser: InjectBrowser, description: string) {
  const page = await browser.get('/tokens');
  const post = await browser.request({
    method: 'POST',
    url: '/tokens',
    headers: FORM,
    payload: new URLSearchParams([
      ['_csrf', csrfOf(page.body)],
      ['description', description],
      ['privileges', 'Write'],
    ]).toString(),
  });
  return { post, location: String(post.headers.location) };
}

const publicTokens = async (h: Harness, userId: number) =>
  (
    await h.store.db
      .selectFrom('tokens')
      .select('id')
      .where('user_id', '=', userId)
      .where('private', '=', 0)
      .execute()
  ).length;

for (const dialect of DIALECTS) {
  describe(`a new token's secret, shown once [${dialect}]`, () => {
    it('answers the creation with a redirect: a reload shows the secret no more and makes no second token', async (t) => {
      const h = await build(t, dialect);
      const { user, browser } = await signedIn(h);
      const { post, location } = await create(browser, 'reloaded');
      assert.equal(post.statusCode, 303, 'the POST is answered by a redirect, not by the page');
      assert.match(location, /^\/tokens\?created=\d+$/);
      assert.equal(newSecretOf(post.body), undefined, 'the POST answer carries no secret');
      const first = await browser.get(location);
      const secret = newSecretOf(first.body);
      assert.ok(secret, 'the page it lands on shows the secret');
      assert.equal(location.includes(secret), false, 'the secret is not in the address');
      // A reload asks the page again (GET): no secret, a note saying why, and still one token.
      const reload = await browser.get(location);
      assert.equal(reload.statusCode, 200);
      assert.equal(newSecretOf(reload.body), undefined);
      assert.equal(reload.body.includes(secret), false);
      assert.match(reload.body, /shown once already and cannot be shown again/);
      assert.equal(await publicTokens(h, user.id), 1);
      // The secret works.
      const self = await h.api({
        method: 'GET',
        path: '/tokens/self',
        headers: { 'x-ripple-token': secret },
      });
      assert.equal(self.statusCode, 200);
    });

    it("is shown only to the session that made it: not the same user's other session, nor another user", async (t) => {
      const h = await build(t, dialect);
      const { user, browser } = await signedIn(h);
      const { location } = await create(browser, 'mine');
      const otherSession = new InjectBrowser(h.app);
      await otherSession.signIn(user);
      const stranger = (await signedIn(h)).browser;
      for (const [who, other] of [
        ['another session of the same user', otherSession],
        ['another user', stranger],
      ] as const) {
        const page = await other.get(location);
        assert.equal(page.statusCode, 200, who);
        assert.equal(newSecretOf(page.body), undefined, who);
      }
      // Their attempts took nothing away from the session that made it.
      assert.ok(newSecretOf((await browser.get(location)).body));
    });

    it('waits in the database sealed with the session cookie: the row holds neither the secret nor its hash', async (t) => {
      const h = await build(t, dialect);
      const { browser } = await signedIn(h);
      const { location } = await create(browser, 'sealed');
      const rows = await h.store.db.selectFrom('token_reveals').selectAll().execute();
      assert.equal(rows.length, 1);
      const stored = JSON.stringify(rows);
      const secret = newSecretOf((await browser.get(location)).body);
      assert.ok(secret);
      assert.equal(stored.includes(secret), false);
      assert.equal(stored.includes(sha256(secret)), false);
      assert.equal(stored.includes(Buffer.from(secret).toString('base64url')), false);
      assert.equal(
        (await h.store.db.selectFrom('token_reveals').selectAll().execute()).length,
        0,
        'gone once shown',
      );
    });

    it('is shown by another instance on the same database (instances share no memory)', async (t) => {
      const h = await build(t, dialect);
      const { browser } = await signedIn(h);
      const { location } = await create(browser, 'elsewhere');
      const other = await buildApp(h.config, { store: await openStore(h.database.config) });
      t.after(() => other.close());
      const there = await other.inject({ url: location, cookies: Object.fromEntries(browser.cookies) });
      assert.equal(there.statusCode, 200, there.body);
      const secret = newSecretOf(there.body);
      assert.ok(secret, 'the other instance shows the secret');
      assert.equal(newSecretOf((await browser.get(location)).body), undefined, 'and it was shown once');
    });

    it('is not shown once REVEAL_TTL_S has passed, nor after signing out (the row goes with the session)', async (t) => {
      const h = await build(t, dialect);
      const { user, browser } = await signedIn(h);
      const late = await create(browser, 'late');
      await h.store.db
        .updateTable('token_reveals')
        .set((eb) => ({ created_at: eb('created_at', '-', REVEAL_TTL_S) }))
        .execute();
      assert.equal(newSecretOf((await browser.get(late.location)).body), undefined);

      const left = await create(browser, 'left behind');
      assert.equal((await h.store.db.selectFrom('token_reveals').select('token_id').execute()).length, 1);
      const page = await browser.get('/tokens');
      assert.equal((await browser.post('/logout', { _csrf: csrfOf(page.body) })).statusCode, 303);
      const reveals = (await h.store.db.selectFrom('token_reveals').select('token_id').execute()).length;
      if (dialect === 'ripple') {
        // In place no table of tokend's refers to the family's tokens (its programs delete rows without
        // knowing tokend's tables): the sealed row stays, and opens for no one, its session gone and its
        // key that session's cookie, which the browser no longer has.
        assert.equal(reveals, 1);
        await browser.signIn(user);
        assert.equal(newSecretOf((await browser.get(left.location)).body), undefined);
      } else assert.equal(reveals, 0);
      assert.equal(await publicTokens(h, user.id), 2, 'the tokens themselves stay');
    });

    it('reaches no log line, at log level trace', async (t) => {
      const lines: string[] = [];
      const logger = {
        ...(loggerOptions('trace') as Record<string, unknown>),
        stream: { write: (line: string) => void lines.push(line) },
      };
      const h = await build(t, dialect, { LOG_LEVEL: 'trace' }, { logger });
      const { browser } = await signedIn(h);
      const { location } = await create(browser, 'logged?');
      const secret = newSecretOf((await browser.get(location)).body);
      assert.ok(secret);
      await browser.get(location);
      assert.ok(lines.length > 5, `the logger wrote (${lines.length} lines)`);
      const log = lines.join('');
      assert.ok(log.includes(location), 'the request lines are there');
      assert.equal(log.includes(secret), false);
      assert.equal(log.includes(sha256(secret)), false);
    });
  });
}
