// Sudo mode on the consent page, judged by the app's one injected clock (BuildOptions.clock): the sign-in
// records its time from it, and the page and the Allow form read it; moving it past SUDO_WINDOW_S asks
// for the password again.
import { describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { DIALECTS } from '../helpers/dialects.ts';
import { build } from '../helpers/app.ts';
import { InjectBrowser, hiddenFieldsOf } from '../helpers/inject-browser.ts';
import { authorizeUrl, pkcePair, registerClient } from '../helpers/oauth.ts';

const WINDOW_S = 600;

for (const dialect of DIALECTS) {
  describe(`consent and sudo mode, by the injected clock [${dialect}]`, () => {
    it('approves without a password inside the window, and asks for it once the clock has moved past', async (t) => {
      // Far from the wall clock: a decision read from anything but the injected clock would show.
      let now = 1_500_000_000;
      const h = await build(t, dialect, { SUDO_WINDOW_S: String(WINDOW_S) }, { clock: () => now });
      const owner = await h.createUser();
      const user = await h.createUser();
      const client = await registerClient(h, { ownerId: owner.id, public: true });
      const browser = new InjectBrowser(h.app);
      await browser.signIn(user);
      const request = () => authorizeUrl({ client, challenge: pkcePair().challenge, scope: 'write' });

      now += WINDOW_S - 1;
      const fresh = await browser.get(request());
      assert.equal(fresh.statusCode, 200);
      assert.doesNotMatch(fresh.body, /name="confirm_password"/);
      const approved = await browser.post('/oauth/authorize', {
        ...hiddenFieldsOf(fresh.body),
        decision: 'allow',
      });
      assert.equal(approved.statusCode, 303);
      assert.ok(new URL(approved.headers.location as string).searchParams.get('code'));

      now += 1;
      const stale = await browser.get(
        authorizeUrl({ client, challenge: pkcePair().challenge, scope: 'read_confidential' }),
      );
      assert.equal(stale.statusCode, 200);
      assert.match(stale.body, /name="confirm_password"/);
      const refused = await browser.post('/oauth/authorize', {
        ...hiddenFieldsOf(stale.body),
        decision: 'allow',
      });
      assert.equal(refused.statusCode, 403);
      assert.match(refused.body, /name="confirm_password"/);
      const confirmed = await browser.post('/oauth/authorize', {
        ...hiddenFieldsOf(refused.body),
        decision: 'allow',
        confirm_password: user.password,
      });
      assert.equal(confirmed.statusCode, 303);
    });
  });
}
