// What tokend answers where docs/compatibility.md says it differs from the Ripple family's API: a 405 is a
// JSON envelope (the family's is plain text), `privileges: -1` is a 400, OPTIONS is a 405 naming the
// path's methods, paths are matched with their letter case, and a `null` body is a 400. Each claim of
// the page's "Corrections" is checked here, on every backend.
import { describe, it } from 'node:test';
import assert from 'node:assert/strict';
import type { LightMyRequestResponse } from 'fastify';
import { DIALECTS } from '../helpers/dialects.ts';
import { body, sharedHarness } from '../helpers/app.ts';

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

    it('paths are matched with their letter case: an upper-case path is the 404 with X-Real-404', async () => {
      const h = harness();
      const user = await h.createUser();
      const token = await h.createToken(user.id, { privileges: 2 });
      for (const [method, url] of [
        ['GET', '/API/v1/tokens'],
        ['GET', '/api/V1/tokens'],
        ['GET', '/api/v1/Tokens/self'],
        ['GET', '/api/v1/TOKENS/SELF'],
        ['GET', '/api/v1/PING'],
        ['POST', '/api/v1/TOKENS'],
        ['POST', '/api/v1/tokens/SELF/delete'],
      ] as const) {
        const r = await h.app.inject({ method, url, headers: { 'x-ripple-token': token.secret } });
        assert.equal(errorEnvelope(r, 404, `${method} ${url}`), 'No such endpoint.');
        assert.equal(r.headers['x-real-404'], 'yes', url);
      }
      // The token is still there: no upper-case POST deleted it.
      const self = await h.api({
        method: 'GET',
        path: '/tokens/self',
        headers: { 'x-ripple-token': token.secret },
      });
      assert.equal(self.statusCode, 200);
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
