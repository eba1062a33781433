// What tokend answers where docs/compatibility.md says it differs from the Ripple family's API, or where
// it answers as the family does and the page says so: a 405 is a JSON envelope (the family's is plain
// text), `privileges: -1` is a 400, OPTIONS is a 405 naming the path's methods, a path in other letters is
// redirected to its route (301 or 307) and a dot segment resolved, as the family's server does, and a
// `null` body is a 400. Each such claim of the page is checked here, on every backend.
import { describe, it } from 'node:test';
import assert from 'node:assert/strict';
import type { LightMyRequestResponse } from 'fastify';
import { DIALECTS } from '../helpers/dialects.ts';
import { body, build, sharedHarness } from '../helpers/app.ts';

const CREATE_PATHS = ['/tokens', '/tokens/new', '/token/new'] as const;
const JSON_TYPE = { 'content-type': 'application/json' };

/** The envelope of an error answer: JSON, the code as the status, a message; the token is untouched. */
function errorEnvelope(r: LightMyRequestResponse, code: number, what: string): string {
  assert.equal(r.statusCode, code, `${what}: ${r.body}`);
  assert.match(r.headers['content-type'] ?? '', /^application\/json/, what);
  const b = body(r);
  assert.deepEqual(Object.keys(b).sort(), ['code', 'message'], what);
  assert.equal(b.code, code, what);
  return String(b.message);
}

for (const dialect of DIALECTS) {
  describe(`answers that differ from the Ripple family's [${dialect}]`, () => {
    const harness = sharedHarness(dialect);

    it('a wrong method is a 405 JSON envelope with Allow, not the family\'s plain "Method Not Allowed"', async () => {
      const h = harness();
      const r = await h.api({ method: 'PUT', path: '/tokens/self' });
      assert.match(
        errorEnvelope(r, 405, 'PUT /tokens/self'),
        /does not take PUT; it takes DELETE, GET, HEAD/,
      );
      assert.equal(r.headers.allow, 'DELETE, GET, HEAD');
      assert.notEqual(r.body.trim(), 'Method Not Allowed');
    });

    it('privileges -1 (the family: everything the user may hold) is a 400 naming the field; every known bit is the way to ask', async () => {
      const h = harness();
      const user = await h.createUser({ privileges: 3 });
      for (const path of CREATE_PATHS)
        for (const [privileges, problem] of [
          [-1, /body\/privileges must be >= 0/],
          [-2147483648, /body\/privileges must be >= 0/],
          ['-1', /body\/privileges must be integer/],
        ] as const) {
          const r = await h.api({
            method: 'POST',
            path,
            headers: JSON_TYPE,
            payload: JSON.stringify({ username: user.username, password: user.password, privileges }),
          });
          assert.match(errorEnvelope(r, 400, `${path} ${privileges}`), problem);
        }
      // No token was made by those attempts: the user's first token is the one asked for below.
      // Every token bit tokend knows (2^14 − 1), limited to what this user may hold: ReadConfidential,
      // Write and Bancho for a plain user (Read is never granted).
      const all = await h.api({
        method: 'POST',
        path: '/tokens',
        headers: JSON_TYPE,
        payload: JSON.stringify({
          username: user.username,
          password: user.password,
          privileges: 2 ** 14 - 1,
        }),
      });
      assert.equal(all.statusCode, 200, all.body);
      assert.equal(body(all).privileges, 2 | 4 | 8192);
      const list = await h.api({
        method: 'GET',
        path: '/tokens',
        headers: { 'x-ripple-token': String(body(all).token) },
      });
      assert.equal((body(list).tokens as unknown[]).length, 1);
    });

    it("OPTIONS is a 405 whose Allow names the path's methods; no CORS headers are sent", async () => {
      const h = harness();
      for (const [path, allow] of [
        ['/tokens', 'GET, HEAD, POST'],
        ['/tokens/self', 'DELETE, GET, HEAD'],
        ['/ping', 'GET, HEAD'],
      ] as const) {
        const r = await h.api({
          method: 'OPTIONS',
          path,
          headers: { origin: 'https://elsewhere.example', 'access-control-request-method': 'POST' },
        });
        assert.match(errorEnvelope(r, 405, `OPTIONS ${path}`), /does not take OPTIONS/);
        assert.equal(r.headers.allow, allow, path);
        for (const header of Object.keys(r.headers))
          assert.doesNotMatch(header, /^access-control-/, `OPTIONS ${path}: ${header}`);
      }
      const unknown = await h.api({ method: 'OPTIONS', path: '/nope' });
      assert.equal(errorEnvelope(unknown, 404, 'OPTIONS /nope'), 'No such endpoint.');
      assert.equal(unknown.headers['x-real-404'], 'yes');
    });

    it("a path in other letters is redirected to its route as the family's router does: 301 for GET, 307 otherwise, the query kept", async () => {
      const h = harness();
      const user = await h.createUser();
      const token = await h.createToken(user.id, { privileges: 2 });
      const auth = { 'x-ripple-token': token.secret };
      for (const [method, url, location] of [
        ['GET', '/API/v1/tokens', '/api/v1/tokens'],
        ['GET', '/api/V1/tokens?p=2&l=1', '/api/v1/tokens?p=2&l=1'],
        ['GET', '/api/v1/Tokens/self?token=a%2Fb&pls200', '/api/v1/tokens/self?token=a%2Fb&pls200'],
        ['GET', '/api/v1/TOKENS/SELF/', '/api/v1/tokens/self/'],
        ['GET', '/API//V1/PING', '/api/v1/ping'],
        ['HEAD', '/api/v1/PING', '/api/v1/ping'],
        ['POST', '/api/v1/TOKENS', '/api/v1/tokens'],
        ['POST', '/api/v1/tokens/SELF/delete?callback=x', '/api/v1/tokens/self/delete?callback=x'],
        ['DELETE', '/API/v1/tokens/self', '/api/v1/tokens/self'],
      ] as const) {
        const r = await h.app.inject({ method, url, headers: auth });
        assert.equal(r.statusCode, method === 'GET' ? 301 : 307, `${method} ${url}: ${r.body}`);
        assert.equal(r.headers.location, location, `${method} ${url}`);
      }
      // The redirect itself changed nothing: the token is there, and the route answers at the Location.
      const self = await h.app.inject({ method: 'GET', url: '/api/v1/tokens/self', headers: auth });
      assert.equal(self.statusCode, 200, self.body);
      // No redirect where the lower-case path is no route of this method, or is not under {base_url}: the
      // 404 with X-Real-404, as in the family.
      for (const [method, url] of [
        ['PUT', '/api/v1/TOKENS'],
        ['GET', '/API/v1/nope'],
        ['GET', '/api/v1/tokens/SELFISH'],
        ['GET', '/LOGIN'],
        ['GET', '/Api'],
        ['GET', '/API/v1/tokens/\\evil.example'],
        ['GET', '/API/v1/tokens/%C3%84'],
      ] as const) {
        const r = await h.app.inject({ method, url, headers: { ...auth, accept: 'application/json' } });
        assert.equal(errorEnvelope(r, 404, `${method} ${url}`), 'No such endpoint.');
        assert.equal(r.headers['x-real-404'], 'yes', url);
      }
    });

    it('the redirect keeps BASE_PATH in its own letters, and works at the root with an empty one', async (t) => {
      for (const [basePath, url, location] of [
        ['/Web/API', '/web/api/v1/PING?k=1', '/Web/API/v1/ping?k=1'],
        ['/Web/API', '/WEB/API/V1/tokens', '/Web/API/v1/tokens'],
        ['', '/V1/PING', '/v1/ping'],
      ] as const) {
        const h = await build(t, dialect, { BASE_PATH: basePath });
        const r = await h.app.inject({ method: 'GET', url });
        assert.equal(r.statusCode, 301, `${basePath} ${url}: ${r.body}`);
        assert.equal(r.headers.location, location);
        // outside BASE_PATH nothing is redirected
        if (basePath !== '')
          assert.equal((await h.app.inject({ method: 'GET', url: '/V1/PING' })).statusCode, 404);
      }
    });

    it("a dot segment is read as the family's server reads it: /tokens/./self answers as /tokens/self", async () => {
      const h = harness();
      const user = await h.createUser();
      const token = await h.createToken(user.id, { privileges: 2, description: 'dots' });
      const auth = { 'x-ripple-token': token.secret };
      const self = await h.app.inject({ method: 'GET', url: '/api/v1/tokens/./self', headers: auth });
      assert.equal(self.statusCode, 200, self.body);
      assert.equal(body(self).description, 'dots');
      const ping = await h.app.inject({ method: 'GET', url: '/api/v1/tokens/../ping', headers: auth });
      assert.equal(ping.statusCode, 200, ping.body);
      assert.equal(body(ping).user_id, user.id);
      // never above the root, and the query is not a path
      const above = await h.app.inject({ method: 'GET', url: '/../../api/v1/ping?x=/../', headers: auth });
      assert.equal(body(above).user_id, user.id);
    });

    it('a null body, or any JSON that is not an object, is a 400 saying the body must be an object', async () => {
      const h = harness();
      for (const path of CREATE_PATHS)
        for (const payload of ['null', '[]', '"text"', '7', 'true'])
          for (const headers of [JSON_TYPE, { 'content-type': 'text/plain' }, {}]) {
            const r = await h.api({ method: 'POST', path, headers, payload });
            assert.equal(
              errorEnvelope(r, 400, `${path} ${payload} ${JSON.stringify(headers)}`),
              'Invalid body: body must be object',
            );
          }
      // An empty body too; `{}` is an object, whose fields are missing (422).
      const empty = await h.api({ method: 'POST', path: '/tokens', headers: JSON_TYPE, payload: '' });
      assert.equal(errorEnvelope(empty, 400, 'empty'), 'Invalid body: body must be object');
      const none = await h.api({ method: 'POST', path: '/tokens', headers: JSON_TYPE, payload: '{}' });
      assert.match(errorEnvelope(none, 422, '{}'), /^Missing parameters: username\|id, password\.$/);
    });
  });
}
