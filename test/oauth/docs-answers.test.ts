// docs/oauth.md shows the answers an app developer gets; each JSON block marked `<!-- answer: NAME -->` is
// held here to the real answer of the same request: the same members with values of the same types (the
// secrets, ids and times differ), and the error bodies word for word.
import { describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { readFileSync } from 'node:fs';
import type { LightMyRequestResponse } from 'fastify';
import { DIALECTS } from '../helpers/dialects.ts';
import { body, build } from '../helpers/app.ts';
import { InjectBrowser } from '../helpers/inject-browser.ts';
import { backChannel, obtainTokens, refreshTokens, registerClient } from '../helpers/oauth.ts';

const DOC = readFileSync(new URL('../../docs/oauth.md', import.meta.url), 'utf8');

/** The marked JSON blocks of the document, by name. */
function documentedAnswers(): Map<string, unknown> {
  const answers = new Map<string, unknown>();
  for (const m of DOC.matchAll(/<!-- answer: ([a-z-]+) -->\s*```json\n([\s\S]*?)```/g))
    answers.set(m[1] as string, JSON.parse((m[2] as string).replace(/^ {2}/gm, '')));
  return answers;
}

/** Each member's type, nested objects by member too. */
function shape(value: unknown): unknown {
  if (value === null || typeof value !== 'object' || Array.isArray(value)) return typeof value;
  return Object.fromEntries(
    Object.entries(value as Record<string, unknown>)
      .sort(([a], [b]) => a.localeCompare(b))
      .map(([k, v]) => [k, shape(v)]),
  );
}

const json = (r: LightMyRequestResponse): unknown => JSON.parse(r.body);

for (const dialect of DIALECTS) {
  describe(`docs/oauth.md answers are the real ones [${dialect}]`, () => {
    it('every marked example has the members, and types, of the answer it shows', async (t) => {
      const documented = documentedAnswers();
      assert.deepEqual([...documented.keys()].sort(), [
        'client-credentials',
        'code-exchange',
        'introspect',
        'invalid-token',
        'oauth-error',
        'refresh',
        'self-bearer',
        'self-client',
      ]);
      const h = await build(t, dialect);
      const owner = await h.createUser();
      const user = await h.createUser();
      const client = await registerClient(h, {
        ownerId: owner.id,
        avatar: 'https://tracker.example/icon.png',
      });
      const browser = new InjectBrowser(h.app);
      await browser.signIn(user);
      const bearer = (token: string) => ({ authorization: `Bearer ${token}` });
      const real = new Map<string, unknown>();

      const issued = await obtainTokens(h, browser, client, 'read_confidential');
      real.set('code-exchange', issued);
      real.set(
        'self-bearer',
        body(await h.api({ method: 'GET', path: '/tokens/self', headers: bearer(issued.access_token) })),
      );
      real.set(
        'introspect',
        json(await backChannel(h, '/oauth/introspect', client, { token: issued.access_token })),
      );
      const refreshed = await refreshTokens(h, client, issued.refresh_token);
      assert.equal(refreshed.statusCode, 200, refreshed.body);
      real.set('refresh', json(refreshed));
      const own = await backChannel(h, '/oauth/token', client, { grant_type: 'client_credentials' });
      real.set('client-credentials', json(own));
      const ownToken = (json(own) as { access_token: string }).access_token;
      real.set(
        'self-client',
        body(await h.api({ method: 'GET', path: '/tokens/self', headers: bearer(ownToken) })),
      );
      await backChannel(h, '/oauth/revoke', client, { token: ownToken });
      const gone = await h.api({ method: 'GET', path: '/tokens/self', headers: bearer(ownToken) });
      assert.match(String(gone.headers['www-authenticate']), /error="invalid_token"/);
      real.set('invalid-token', body(gone));
      real.set('oauth-error', json(await refreshTokens(h, client, 'no-such-refresh-token')));

      for (const [name, shown] of documented) {
        const answer = real.get(name);
        if (name === 'invalid-token' || name === 'oauth-error') assert.deepEqual(shown, answer, name);
        else assert.deepEqual(shape(shown), shape(answer), name);
      }
    });
  });
}
