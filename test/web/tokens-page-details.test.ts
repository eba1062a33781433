// The token page's details, through app.inject: each token's id, creation and "Never used", sorting by
// last use, a custom expiry date, the privileges in plain words, how to send a token and the API reference,
// and revoking an application's access after a confirmation.
import { describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { DIALECTS } from '../helpers/dialects.ts';
import { build, type Harness } from '../helpers/app.ts';
import type { InjectBrowser } from '../helpers/inject-browser.ts';
import { FORM, csrfOf, hiddenFieldsOf, signedInUser } from '../helpers/inject-browser.ts';
import {
  exchangeCode,
  obtainCode,
  obtainTokens,
  pkcePair,
  refreshTokens,
  registerClient,
} from '../helpers/oauth.ts';
import { TOKEN_PRIVILEGE_DESCRIPTIONS, TokenPrivilege } from '../../src/auth/privileges.ts';
import { SCOPES } from '../../src/oauth/scopes.ts';
import { escapeHtml } from '../../src/web/html.ts';
import { nowSeconds } from '../../src/auth/clock.ts';
import { MAX_EXPIRES_IN_S } from '../../src/tokens/expiry.ts';

/** The rows of the page's token table: each cell's text by its label. */
function tableRows(html: string): Array<Record<string, string>> {
  const body = /<tbody role="rowgroup">([\s\S]*?)<\/tbody>/.exec(html)?.[1] ?? '';
  return [...body.matchAll(/<tr role="row">([\s\S]*?)<\/tr>/g)].map((row) => {
    const cells: Record<string, string> = {};
    for (const cell of (row[1] ?? '').matchAll(
      /<td role="cell"[^>]*data-label="([^"]+)"[^>]*>([\s\S]*?)<\/td>/g,
    ))
      cells[cell[1] as string] = (cell[2] as string)
        .replace(/<[^>]+>/g, '')
        .replace(/\s+/g, ' ')
        .trim();
    return cells;
  });
}

const setTimes = (h: Harness, id: number, times: { last_updated?: number; created_at?: number | null }) =>
  h.store.db.updateTable('tokens').set(times).where('id', '=', id).execute();

/** Posts the creation form with `fields` (repeatable) and the page's CSRF token. */
async function postCreate(browser: InjectBrowser, fields: Array<[string, string]>) {
  const csrf = csrfOf((await browser.get('/tokens')).body);
  return browser.request({
    method: 'POST',
    url: '/tokens',
    headers: FORM,
    payload: new URLSearchParams([['_csrf', csrf], ...fields]).toString(),
  });
}

const utcDate = (at: number) => new Date(at * 1000).toISOString().slice(0, 10);

for (const dialect of DIALECTS) {
  describe(`token page details [${dialect}]`, () => {
    it('shows each token\'s id and creation, and "Never used" until its first use', async (t) => {
      const h = await build(t, dialect);
      const { user, browser } = await signedInUser(h);
      const now = nowSeconds();
      const fresh = await h.createToken(user.id, { description: 'fresh' });
      await setTimes(h, fresh.id, { created_at: now - 3 * 86_400, last_updated: now - 3 * 86_400 });
      const used = await h.createToken(user.id, { description: 'used' });
      await setTimes(h, used.id, { created_at: now - 2 * 86_400, last_updated: now - 2 * 3600 });
      // A token from before creation times were recorded (an import, an older tokend): created unknown.
      const old = await h.createToken(user.id, { description: 'older' });
      await setTimes(h, old.id, { created_at: null, last_updated: now - 5 * 60 });

      const rows = tableRows((await browser.get('/tokens')).body);
      assert.deepEqual(
        rows.map((r) => [r.Description, r.ID, r.Created, r['Last used']]),
        [
          ['fresh', String(fresh.id), '3 days ago', 'Never used'],
          ['used', String(used.id), '2 days ago', '2 hours ago'],
          ['older', String(old.id), 'unknown', '5 minutes ago'],
        ],
      );
      // Its first use (still in memory, then written) ends "Never used" at once, with where it came from.
      const r = await h.api({
        method: 'GET',
        path: '/tokens/self',
        headers: { 'x-ripple-token': fresh.secret },
      });
      assert.equal(r.statusCode, 200);
      const lastUse = 'just now from 127.0.0.1';
      assert.equal(tableRows((await browser.get('/tokens')).body)[0]?.['Last used'], lastUse);
      await h.app.tokend.lastUsed.flush();
      assert.equal(tableRows((await browser.get('/tokens')).body)[0]?.['Last used'], lastUse);
      // The confirmation pages say the same.
      const confirm = await browser.get(`/tokens/${used.id}/revoke`);
      assert.match(confirm.body, /<dt>Created<\/dt>\s*<dd><time[^>]*>2 days ago<\/time><\/dd>/);
      const unused = await h.createToken(user.id, { description: 'unused' });
      assert.match((await browser.get(`/tokens/${unused.id}/regenerate`)).body, /Never used/);
    });

    it('sorts by last use, latest first and never-used tokens last; by creation otherwise', async (t) => {
      const h = await build(t, dialect);
      const { user, browser } = await signedInUser(h);
      const now = nowSeconds();
      const made: Array<[string, number | null, number]> = [
        ['a week ago', now - 30 * 86_400, now - 7 * 86_400],
        ['never A', now - 20 * 86_400, now - 20 * 86_400],
        ['an hour ago', now - 10 * 86_400, now - 3600],
        ['never B', now - 86_400, now - 86_400],
        ['a day ago, created unknown', null, now - 86_400],
      ];
      for (const [description, created_at, last_updated] of made) {
        const { id } = await h.createToken(user.id, { description });
        await setTimes(h, id, { created_at, last_updated });
      }
      const byCreation = tableRows((await browser.get('/tokens')).body).map((r) => r.Description);
      assert.deepEqual(
        byCreation,
        made.map(([d]) => d),
      );
      const page = await browser.get('/tokens?sort=last-used');
      assert.deepEqual(
        tableRows(page.body).map((r) => r.Description),
        ['an hour ago', 'a day ago, created unknown', 'a week ago', 'never B', 'never A'],
      );
      assert.match(page.body, /<a href="\/tokens\?sort=last-used" aria-current="true">/);
      assert.match(page.body, /<a href="\/tokens">Created/);
      // An unknown order is the default one.
      assert.deepEqual(
        tableRows((await browser.get('/tokens?sort=nonsense')).body).map((r) => r.Description),
        byCreation,
      );
    });

    it('keeps the order across pages', async (t) => {
      const h = await build(t, dialect);
      const { user, browser } = await signedInUser(h);
      for (let i = 0; i < 51; i++) await h.createToken(user.id, { description: `t${i}` });
      const first = await browser.get('/tokens?sort=last-used');
      assert.match(first.body, /href="\/tokens\?sort=last-used&amp;p=2">Next page/);
      const second = await browser.get('/tokens?sort=last-used&p=2');
      assert.equal(tableRows(second.body).length, 1);
      assert.match(second.body, /href="\/tokens\?sort=last-used">Previous page/);
    });

    it('takes a custom expiry date, up to the longest expiry; refuses other dates with the field focused', async (t) => {
      const h = await build(t, dialect);
      const { user, browser } = await signedInUser(h);
      const page = await browser.get('/tokens');
      const now = nowSeconds();
      const min = utcDate(now);
      const max = utcDate(now + MAX_EXPIRES_IN_S - 86_400);
      assert.match(page.body, /<option value="custom">On a date…<\/option>/);
      assert.match(
        page.body,
        new RegExp(`type="date"\\s+id="expires_on"\\s+name="expires_on"\\s+min="${min}"\\s+max="${max}"`),
      );

      const day = utcDate(now + 40 * 86_400);
      const made = await postCreate(browser, [
        ['description', 'until a date'],
        ['expires_in', 'custom'],
        ['expires_on', day],
      ]);
      assert.equal(made.statusCode, 303, made.body);
      const row = await h.store.db
        .selectFrom('tokens')
        .select('expires_at')
        .where('user_id', '=', user.id)
        .where('description', '=', 'until a date')
        .executeTakeFirstOrThrow();
      assert.equal(
        Number(row.expires_at),
        Date.parse(`${day}T00:00:00Z`) / 1000 + 86_400,
        'the end of that day',
      );

      const refused: Array<[string, RegExp]> = [
        [utcDate(now - 86_400), /has passed/],
        [utcDate(now + MAX_EXPIRES_IN_S + 86_400), new RegExp(`up to ${max}`)],
        ['2030-02-30', /Choose the date/],
        ['tomorrow', /Choose the date/],
        ['', /Choose the date/],
      ];
      for (const [date, message] of refused) {
        const r = await postCreate(browser, [
          ['description', 'bad date'],
          ['expires_in', 'custom'],
          ['expires_on', date],
        ]);
        assert.equal(r.statusCode, 400, date);
        assert.match(r.body, message, date);
        // The form comes back as it was sent, the date field focused and marked, described by the
        // message, which sits just above it (not at the top of the page).
        assert.match(r.body, /<option value="custom" selected>/, date);
        assert.match(
          r.body,
          /<p class="error field-error" role="alert" id="field-error">[^<]+<\/p>\s*<input\s+type="date"\s+id="expires_on"[^>]*autofocus aria-invalid="true" aria-describedby="field-error expires-on-about"/s,
          date,
        );
        assert.doesNotMatch(r.body, /id="page-error"/, date);
      }
      const tokens = await h.store.db
        .selectFrom('tokens')
        .select('id')
        .where('description', '=', 'bad date')
        .execute();
      assert.equal(tokens.length, 0);
      // The date is read only with "On a date…": a list choice wins.
      const listed = await postCreate(browser, [
        ['description', 'a week'],
        ['expires_in', String(7 * 86_400)],
        ['expires_on', '1999-01-01'],
      ]);
      assert.equal(listed.statusCode, 303);
    });

    it('focuses the field an error is about: the description, the privileges', async (t) => {
      const h = await build(t, dialect);
      const { browser } = await signedInUser(h);
      // Each message sits next to its field (just above it), which it describes; none at the top.
      const long = await postCreate(browser, [['description', 'x'.repeat(1025)]]);
      assert.equal(long.statusCode, 400);
      assert.match(
        long.body,
        /id="field-error">The description is too long[^<]*<\/p>\s*<input[^>]*id="description"[^>]*autofocus aria-invalid="true" aria-describedby="field-error"/s,
      );
      // The description rule of the API and the CLI: a tab is fine, a line break or a C1 control is not.
      for (const [description, said] of [
        ['two\nlines', 'U+000A'],
        ['a\u0085b', 'U+0085'],
        ['a\u007fb', 'U+007F'],
      ]) {
        const refused = await postCreate(browser, [['description', description as string]]);
        assert.equal(refused.statusCode, 400);
        assert.match(
          refused.body,
          new RegExp(
            `id="field-error">The description may not contain control characters \\(it has ${(said as string).replace('+', '\\+')}\\); a tab is allowed\\.</p>`,
          ),
        );
      }
      // The rule of application names too: nothing that hides itself or turns the text around.
      for (const [description, said] of [
        ['pay\u202egnp.exe', 'U+202E'],
        ['pay\u200bpal', 'U+200B'],
      ]) {
        const refused = await postCreate(browser, [['description', description as string]]);
        assert.equal(refused.statusCode, 400);
        assert.match(
          refused.body,
          new RegExp(
            `id="field-error">The description may not contain invisible or formatting characters, such as a right-to-left override, a zero-width space or a soft hyphen \\(it has ${(said as string).replace('+', '\\+')}\\)\\.</p>`,
          ),
        );
      }
      const tabbed = await postCreate(browser, [['description', 'a\tb']]);
      assert.equal(tabbed.statusCode, 303);
      const forged = await postCreate(browser, [['privileges', 'ManageUser']]);
      assert.equal(forged.statusCode, 400);
      assert.match(
        forged.body,
        /<legend>Privileges<\/legend>\s*<p class="error field-error" role="alert" id="field-error">Your account cannot give a token these privileges: ManageUser\.<\/p>/,
      );
      assert.match(
        forged.body,
        /value="ReadConfidential"[^>]*autofocus aria-invalid="true" aria-describedby="field-error privilege-ReadConfidential"/s,
      );
      const unknownExpiry = await postCreate(browser, [['expires_in', '12x']]);
      assert.equal(unknownExpiry.statusCode, 400);
      assert.match(
        unknownExpiry.body,
        /id="field-error">Choose when the token expires\.<\/p>\s*<select id="expires_in" name="expires_in"\s+autofocus aria-invalid="true" aria-describedby="field-error"/s,
      );
      for (const r of [long, forged, unknownExpiry]) {
        assert.equal((r.body.match(/autofocus/g) ?? []).length, 1);
        assert.equal((r.body.match(/id="field-error"/g) ?? []).length, 1);
        assert.doesNotMatch(r.body, /id="page-error"/);
      }
    });

    it('explains each privilege in plain words, from the table the consent page words its scopes with', async (t) => {
      const h = await build(t, dialect);
      const { user, browser } = await signedInUser(h);
      const page = (await browser.get('/tokens')).body;
      for (const name of ['ReadConfidential', 'Write', 'Bancho'] as const) {
        const about = new RegExp(
          `value="${name}"\\s+aria-describedby="privilege-${name}"[\\s\\S]*?<span class="about muted" id="privilege-${name}">([^<]*)</span>`,
        ).exec(page)?.[1];
        assert.equal(about, escapeHtml(TOKEN_PRIVILEGE_DESCRIPTIONS[name].full), name);
      }
      assert.equal(SCOPES.read_confidential?.description, TOKEN_PRIVILEGE_DESCRIPTIONS.ReadConfidential.full);
      assert.equal(SCOPES.write?.description, TOKEN_PRIVILEGE_DESCRIPTIONS.Write.full);
      assert.equal(SCOPES.bancho?.description, TOKEN_PRIVILEGE_DESCRIPTIONS.Bancho.full);
      // The revoke confirmation lists the token's privileges with their words too.
      const token = await h.createToken(user.id, { privileges: TokenPrivilege.Bancho });
      assert.match(
        (await browser.get(`/tokens/${token.id}/revoke`)).body,
        new RegExp(
          `<strong>Bancho</strong>: ${escapeHtml(TOKEN_PRIVILEGE_DESCRIPTIONS.Bancho.full).replace(/[()]/g, '\\$&')}`,
        ),
      );
    });

    it('says how to send a token and links the API reference, which links back to the token page', async (t) => {
      const h = await build(t, dialect, { PUBLIC_URL: 'https://tokens.example' });
      const { browser } = await signedInUser(h);
      const page = (await browser.get('/tokens')).body;
      assert.match(page, /<code>X-Ripple-Token<\/code>/);
      assert.match(page, /<code>Authorization: Bearer<\/code>/);
      assert.match(
        page,
        /curl -H "X-Ripple-Token: YOUR_TOKEN" https:\/\/tokens\.example\/api\/v1\/tokens\/self/,
      );
      assert.match(page, /<a href="\/api\/docs">API reference<\/a>/);
      assert.equal((await h.app.inject({ url: '/api/docs' })).statusCode, 200);
      const doc = (await h.app.inject({ url: '/api/v1/openapi.json' })).json() as {
        info: { description: string };
      };
      assert.match(doc.info.description, /\[your token page\]\(\/tokens\)/);
    });

    it('says an application whose tokens were all revoked holds none, not that it never used its access', async (t) => {
      const h = await build(t, dialect);
      const { browser } = await signedInUser(h);
      const maker = await h.createUser();
      const client = await registerClient(h, { ownerId: maker.id, name: 'Replay Viewer' });
      /** The application's line on the token page and its revoke confirmation, as text. */
      const said = async () => {
        const text = (html: string) =>
          html
            .replace(/<[^>]+>/g, '')
            .replace(/\s+/g, ' ')
            .trim();
        const page = text((await browser.get('/tokens')).body);
        const confirm = text((await browser.get(`/tokens/applications/${client.id}/revoke`)).body);
        return { page: /Replay Viewer (.*?) Revoke access…/.exec(page)?.[1] ?? page, confirm };
      };

      const first = await obtainTokens(h, browser, client);
      assert.match((await said()).page, /Last used just now\.$/);
      const rotated = await refreshTokens(h, client, first.refresh_token);
      assert.equal(rotated.statusCode, 200, rotated.body);
      // The rotated refresh token presented again: reuse detection ends every token of the grant.
      const replayed = await refreshTokens(h, client, first.refresh_token);
      assert.equal(replayed.statusCode, 400, replayed.body);
      const next = rotated.json() as { access_token: string };
      const bearer = await h.api({
        method: 'GET',
        path: '/tokens/self',
        headers: { authorization: `Bearer ${next.access_token}` },
      });
      assert.equal(bearer.statusCode, 404, 'the grant ended: the bearer token is no token in use');

      // Still approved, so still listed, and the page says only what it knows: no live token, no use.
      const after = await said();
      assert.match(after.page, /Approved just now\. No live tokens\.$/);
      assert.doesNotMatch(after.page, /not used|Last used/i);
      assert.match(after.confirm, /It holds no live token for you\./);
      assert.doesNotMatch(after.confirm, /not used its access/);
    });

    it("asks before revoking an application's access; the confirmation alone revokes nothing", async (t) => {
      const h = await build(t, dialect);
      const { browser } = await signedInUser(h);
      const maker = await h.createUser();
      const client = await registerClient(h, { ownerId: maker.id, name: 'Score <Tracker>' });
      const { verifier, challenge } = pkcePair();
      const code = await obtainCode(browser, { client, challenge, scope: 'write' });
      const access = (await exchangeCode(h, client, code, verifier)).json().access_token as string;
      const bearerWorks = async () =>
        (await h.api({ method: 'GET', path: '/tokens/self', headers: { authorization: `Bearer ${access}` } }))
          .statusCode === 200;
      assert.ok(await bearerWorks());

      const page = await browser.get('/tokens');
      const confirmUrl = `/tokens/applications/${client.id}/revoke`;
      // The list links to a confirmation; no form on it revokes at once.
      assert.match(page.body, new RegExp(`<a\\s+class="button"\\s+href="${confirmUrl}"`));
      assert.doesNotMatch(page.body, /<form[^>]*action="\/tokens\/applications\//);
      const confirm = await browser.get(confirmUrl);
      assert.equal(confirm.statusCode, 200);
      assert.match(confirm.body, /Revoke access of Score &lt;Tracker&gt;\?/);
      assert.match(confirm.body, /make changes/);
      assert.match(confirm.body, new RegExp(`<form method="post" action="${confirmUrl}">`));
      assert.ok(await bearerWorks(), 'showing the confirmation revokes nothing');
      const done = await browser.post(confirmUrl, hiddenFieldsOf(confirm.body));
      assert.equal(done.statusCode, 303);
      assert.equal(done.headers.location, '/tokens?disconnected=1');
      assert.equal(await bearerWorks(), false);
      assert.equal((await browser.get(confirmUrl)).statusCode, 404, 'no longer connected');
      assert.equal((await browser.get('/tokens/applications/nope/revoke')).statusCode, 404);
    });
  });
}
