// The envelope everywhere: /v1/ping, the JSON 404 with X-Real-404, pls200 and JSONP.
import { describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { DIALECTS } from '../helpers/dialects.ts';
import { sql } from 'kysely';
import { build, body, sharedHarness } from '../helpers/app.ts';

/** The JSON inside a JSONP answer `…name(json);`. */
function unwrapJsonp(text: string, name: string): Record<string, unknown> {
  const start = text.indexOf(`${name}(`);
  assert.ok(start >= 0, `no call of ${name} in ${text}`);
  const inner = text.slice(start + name.length + 1).replace(/\);?\s*$/, '');
  return JSON.parse(inner) as Record<string, unknown>;
}

for (const dialect of DIALECTS) {
  describe(`envelope [${dialect}]`, () => {
    const harness = sharedHarness(dialect);
    it('GET /v1/ping without a credential: user 0, no privileges', async () => {
      const h = harness();
      const r = await h.api({ method: 'GET', path: '/ping' });
      assert.equal(r.statusCode, 200);
      assert.match(r.headers['content-type'] ?? '', /application\/json/);
      const b = body(r);
      assert.equal(b.code, 200);
      assert.equal(typeof b.message, 'string');
      assert.notEqual(b.message, '');
      assert.equal(b.user_id, 0);
      assert.equal(b.privileges, 0);
      assert.equal(b.privileges_string, '');
      assert.equal(b.user_privileges, 0);
      assert.equal(b.user_privileges_string, '');
    });

    it('GET /v1/ping with a token: its owner, effective privileges and their names', async () => {
      const h = harness();
      const user = await h.createUser({ privileges: 3 | 4 });
      const token = await h.createToken(user.id, { privileges: 2 | 4 | 128 });
      const r = await h.api({ method: 'GET', path: '/ping', headers: { 'x-ripple-token': token.secret } });
      const b = body(r);
      assert.equal(b.user_id, user.id);
      assert.equal(b.privileges, 6); // ManageUser (128) is beyond the owner
      assert.deepEqual(String(b.privileges_string).split(', ').sort(), ['ReadConfidential', 'Write']);
      assert.equal(b.user_privileges, 7);
      assert.deepEqual(String(b.user_privileges_string).split(', ').sort(), [
        'UserDonor',
        'UserNormal',
        'UserPublic',
      ]);
    });

    it('an unknown path under the API is a 404 envelope with X-Real-404: yes', async () => {
      const h = harness();
      for (const url of [
        '/api/v1/nope',
        '/api/nope',
        '/api/v2/tokens',
        '/api/v1/tokens/self/extra',
        '/api/',
      ]) {
        for (const method of ['GET', 'POST'] as const) {
          const r = await h.app.inject({ method, url });
          assert.equal(r.statusCode, 404, `${method} ${url}`);
          assert.equal(r.headers['x-real-404'], 'yes', `${method} ${url}`);
          const b = body(r);
          assert.equal(b.code, 404);
          assert.equal(typeof b.message, 'string');
          assert.notEqual(b.message, '');
        }
      }
      // a method a path does not have: 405 with the methods it has (not a 404)
      const put = await h.api({ method: 'PUT', path: '/tokens' });
      assert.equal(put.statusCode, 405);
      assert.equal(put.headers.allow, 'GET, HEAD, POST');
      assert.equal(put.headers['x-real-404'], undefined);
      assert.equal(body(put).code, 405);
    });

    it('a real 404 of an endpoint (no token in use) has no X-Real-404 header', async () => {
      const h = harness();
      const r = await h.api({ method: 'GET', path: '/tokens/self' });
      assert.equal(r.statusCode, 404);
      assert.equal(r.headers['x-real-404'], undefined);
    });

    it('pls200 (any value, even empty) makes the HTTP status 200 and keeps the code in the body', async () => {
      const h = harness();
      const cases = [
        { method: 'GET', url: '/api/v1/tokens/self?pls200', code: 404 },
        { method: 'GET', url: '/api/v1/tokens/self?pls200=', code: 404 },
        { method: 'GET', url: '/api/v1/tokens?pls200=1', code: 401 },
        { method: 'POST', url: '/api/v1/tokens/self/delete?pls200=no', code: 400 },
        { method: 'GET', url: '/api/v1/nowhere?pls200', code: 404 },
        { method: 'POST', url: '/api/v1/tokens?pls200', code: 422, payload: {} },
        { method: 'POST', url: '/api/v1/tokens?pls200', code: 404, payload: { id: 999, password: 'x' } },
        { method: 'GET', url: '/api/v1/ping?pls200', code: 200 },
      ] as const;
      for (const c of cases) {
        const r = await h.app.inject({
          method: c.method,
          url: c.url,
          ...('payload' in c ? { payload: c.payload } : {}),
        });
        assert.equal(r.statusCode, 200, `${c.method} ${c.url}`);
        assert.equal(body(r).code, c.code, `${c.method} ${c.url}: ${r.body}`);
      }
      const badJson = await h.app.inject({
        method: 'POST',
        url: '/api/v1/tokens?pls200',
        headers: { 'content-type': 'application/json' },
        payload: '{',
      });
      assert.equal(badJson.statusCode, 200);
      assert.equal(body(badJson).code, 400);
      const tooLarge = await h.app.inject({
        method: 'POST',
        url: '/api/v1/tokens?pls200',
        headers: { 'content-type': 'application/json' },
        payload: JSON.stringify({ description: 'x'.repeat(3 * 1024 * 1024) }),
      });
      assert.equal(tooLarge.statusCode, 200);
      assert.equal(body(tooLarge).code, 413);
      // without it the status follows the code
      assert.equal((await h.api({ method: 'GET', path: '/tokens' })).statusCode, 401);
    });

    it('a database failure is a 500 envelope that says to try again and shows nothing inside', async (t) => {
      const h = await build(t, dialect);
      const user = await h.createUser();
      const token = await h.createToken(user.id);
      await sql`ALTER TABLE tokens RENAME TO tokens_moved_away`.execute(h.store.db);
      const requests = [
        { method: 'POST', path: '/tokens', payload: { id: user.id, password: user.password } },
        { method: 'GET', path: '/tokens', headers: { 'x-ripple-token': token.secret } },
        { method: 'GET', path: '/tokens/self', headers: { 'x-ripple-token': token.secret } },
        { method: 'POST', path: '/tokens/self/delete', headers: { 'x-ripple-token': token.secret } },
        { method: 'GET', path: '/ping', query: { k: token.secret } },
      ] as const;
      for (const request of requests) {
        const r = await h.api(request);
        const label = `${request.method} ${request.path}: ${r.body}`;
        assert.equal(r.statusCode, 500, label);
        const b = body(r);
        assert.equal(b.code, 500, label);
        assert.match(String(b.message), /try again/i, label);
        assert.doesNotMatch(r.body, /tokens|sql|relation|table|select|insert|sqlite|postgres|mysql/i, label);
        assert.ok(!r.body.includes(token.secret), label);
      }
      const forced = await h.api({
        method: 'GET',
        path: '/tokens?pls200',
        headers: { 'x-ripple-token': token.secret },
      });
      assert.equal(forced.statusCode, 200);
      assert.equal(body(forced).code, 500);
    });

    it('JSONP: a valid callback wraps the envelope as application/javascript', async () => {
      const h = harness();
      for (const name of ['cb', '$', '_x1', 'jQuery_123$abc', 'a'.repeat(99)]) {
        const r = await h.app.inject({
          method: 'GET',
          url: `/api/v1/ping?callback=${encodeURIComponent(name)}`,
        });
        assert.equal(r.statusCode, 200);
        assert.match(r.headers['content-type'] ?? '', /^application\/javascript/);
        const b = unwrapJsonp(r.body, name);
        assert.equal(b.code, 200);
        assert.equal(b.user_id, 0);
      }
      const missing = await h.app.inject({ method: 'GET', url: '/api/v1/tokens/self?callback=cb' });
      assert.equal(missing.statusCode, 404);
      assert.equal(unwrapJsonp(missing.body, 'cb').code, 404);
      const both = await h.app.inject({ method: 'GET', url: '/api/v1/tokens?callback=cb&pls200' });
      assert.equal(both.statusCode, 200);
      assert.equal(unwrapJsonp(both.body, 'cb').code, 401);
      // errors raised before the handler (bad JSON) are wrapped too
      const badJson = await h.app.inject({
        method: 'POST',
        url: '/api/v1/tokens?callback=onError',
        headers: { 'content-type': 'application/json' },
        payload: '{',
      });
      assert.equal(badJson.statusCode, 400);
      assert.match(badJson.headers['content-type'] ?? '', /^application\/javascript/);
      assert.equal(unwrapJsonp(badJson.body, 'onError').code, 400);
    });

    it('JSONP: an invalid callback is ignored and plain JSON is sent', async () => {
      const h = harness();
      const invalid = [
        '1abc',
        'a-b',
        'a.b',
        'alert(1)',
        'x y',
        '',
        'a'.repeat(100),
        'a'.repeat(500),
        'é',
        '<script>',
      ];
      for (const name of invalid) {
        const r = await h.app.inject({
          method: 'GET',
          url: `/api/v1/ping?callback=${encodeURIComponent(name)}`,
        });
        assert.equal(r.statusCode, 200, name);
        assert.match(r.headers['content-type'] ?? '', /^application\/json/, name);
        assert.equal(body(r).code, 200, name);
      }
    });
  });
}
