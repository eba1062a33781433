// A native app registered with a loopback redirect URI signs in at whatever port it listens on (RFC 8252
// §7.3): code + PKCE, and the code is exchanged with the redirect_uri the authorization request used.
import { describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { DIALECTS } from '../helpers/dialects.ts';
import { build, body } from '../helpers/app.ts';
import { InjectBrowser } from '../helpers/inject-browser.ts';
import { approve, authorizeUrl, exchangeCode, pkcePair, registerClient } from '../helpers/oauth.ts';

for (const dialect of DIALECTS) {
  describe(`loopback redirect URIs [${dialect}]`, () => {
    it('a confidential app registered with http://127.0.0.1/callback completes code + PKCE at any port', async (t) => {
      const h = await build(t, dialect);
      const owner = await h.createUser();
      const user = await h.createUser();
      const client = await registerClient(h, {
        ownerId: owner.id,
        redirectUris: ['http://127.0.0.1/callback'],
      });
      const browser = new InjectBrowser(h.app);
      await browser.signIn(user);
      const { verifier, challenge } = pkcePair();
      const listening = 'http://127.0.0.1:49321/callback';
      const back = await approve(browser, { client, challenge, redirectUri: listening, state: 's' });
      assert.equal(`${back.origin}${back.pathname}`, 'http://127.0.0.1:49321/callback');
      const code = back.searchParams.get('code')!;

      // The code answers to the redirect_uri of its request, not to the one registered.
      const registered = await exchangeCode(h, client, code, verifier);
      assert.equal(registered.statusCode, 400, registered.body);
      assert.equal(body(registered).error, 'invalid_grant');
      const exchanged = await exchangeCode(h, client, code, verifier, { redirect_uri: listening });
      assert.equal(exchanged.statusCode, 200, exchanged.body);
      assert.equal(body(exchanged).token_type, 'Bearer');
    });

    it('the same for [::1]; any other host keeps its exact port, and only the port may differ', async (t) => {
      const h = await build(t, dialect);
      const owner = await h.createUser();
      const user = await h.createUser();
      const client = await registerClient(h, {
        ownerId: owner.id,
        redirectUris: [
          'http://[::1]:8000/cb',
          'https://app.example/cb',
          'http://localhost/cb',
          'http://127.0.0.1/cb',
        ],
      });
      const browser = new InjectBrowser(h.app);
      await browser.signIn(user);
      const { challenge } = pkcePair();
      const v6 = await browser.get(authorizeUrl({ client, challenge, redirectUri: 'http://[::1]:53682/cb' }));
      assert.equal(v6.statusCode, 200, v6.body);
      for (const redirectUri of [
        'https://app.example:8443/cb',
        'http://localhost:9999/cb',
        'http://127.0.0.1:9999/cb/',
        'http://127.0.0.1:9999@evil.example/cb',
        'http://127.0.0.1:65536/cb',
      ]) {
        const page = await browser.get(authorizeUrl({ client, challenge, redirectUri }));
        assert.equal(page.statusCode, 400, `${redirectUri}: ${page.statusCode}`);
        assert.match(page.body, /not registered/, redirectUri);
        assert.equal(page.headers.location, undefined, 'no redirect to an unregistered URI');
      }
    });
  });
}
