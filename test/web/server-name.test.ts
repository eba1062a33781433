// SERVER_NAME: the name of the community's server on every page (the title and the page itself), the
// sign-in page saying which application it continues to, and the consent page whose account it is.
import { describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { DIALECTS } from '../helpers/dialects.ts';
import { build } from '../helpers/app.ts';
import { InjectBrowser } from '../helpers/inject-browser.ts';
import { authorizeUrl, pkcePair, registerClient } from '../helpers/oauth.ts';

const NAME = 'Akatsuki & Friends';
const SHOWN = 'Akatsuki &amp; Friends';

for (const dialect of DIALECTS)
  describe(`SERVER_NAME on the pages [${dialect}]`, () => {
    it('names the server on the sign-in, token, consent and applications pages; the sign-in names the application', async (t) => {
      const h = await build(t, dialect, { SERVER_NAME: NAME });
      const owner = await h.createUser();
      const user = await h.createUser();
      const client = await registerClient(h, { ownerId: owner.id, name: 'Score Tracker' });
      const browser = new InjectBrowser(h.app);
      const { challenge } = pkcePair();

      const toLogin = await browser.get(authorizeUrl({ client, challenge, scope: 'read_confidential' }));
      assert.equal(toLogin.statusCode, 303);
      const login = await browser.get(String(toLogin.headers.location));
      assert.match(login.body, new RegExp(`<title>Sign in · ${SHOWN}</title>`));
      assert.match(login.body, new RegExp(`<h1>Sign in to ${SHOWN}</h1>`));
      assert.match(login.body, /to continue to <strong>Score Tracker<\/strong>/);
      // Opened directly, it continues to no application.
      assert.doesNotMatch((await browser.get('/login')).body, /to continue to/);

      await browser.signIn(user);
      const pages = {
        tokens: await browser.get('/tokens'),
        consent: await browser.get(authorizeUrl({ client, challenge, scope: 'read_confidential' })),
        applications: await browser.get('/applications'),
      };
      for (const [page, r] of Object.entries(pages)) {
        assert.equal(r.statusCode, 200, `${page}: ${r.statusCode}`);
        assert.match(r.body, new RegExp(`<title>[^<]* · ${SHOWN}</title>`), page);
        assert.match(r.body, new RegExp(`class="brand"><img[^>]*/>${SHOWN}</p>`), page);
      }
      assert.match(pages.consent.body, new RegExp(`wants to act for your ${SHOWN} account`));
    });

    it('says tokend where no name is set', async (t) => {
      const h = await build(t, dialect);
      const login = await new InjectBrowser(h.app).get('/login');
      assert.match(login.body, /<title>Sign in · tokend<\/title>/);
      assert.match(login.body, /<h1>Sign in to tokend<\/h1>/);
    });
  });
