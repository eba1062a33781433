// Security headers are on every kind of answer: the API set on v1 JSON, JSONP, 404s, errors, health;
// helmet's full set on top for the pages (sign-in, consent, token page, API reference).
import { describe, it } from 'node:test';
import assert from 'node:assert/strict';
import type { LightMyRequestResponse } from 'fastify';
import { build, body } from '../helpers/app.ts';

/** The OWASP REST set, on every answer. */
function assertSecurityHeaders(r: LightMyRequestResponse, what: string) {
  const h = r.headers;
  assert.equal(h['x-content-type-options'], 'nosniff', `${what}: x-content-type-options`);
  assert.equal(h['x-frame-options'], 'DENY', `${what}: x-frame-options`);
  assert.match(String(h['content-security-policy']), /frame-ancestors 'none'/, `${what}: csp`);
  assert.match(String(h['strict-transport-security']), /max-age=\d+/, `${what}: hsts`);
  assert.equal(h['x-powered-by'], undefined, `${what}: x-powered-by`);
}

/** JSON answers: nothing may run, load or be cached. */
function assertApiHeaders(r: LightMyRequestResponse, what: string) {
  assertSecurityHeaders(r, what);
  assert.equal(r.headers['content-security-policy'], "default-src 'none'; frame-ancestors 'none'", what);
  assert.equal(r.headers['cache-control'], 'no-store', `${what}: cache-control`);
  assert.equal(r.headers['referrer-policy'], 'no-referrer', `${what}: referrer-policy`);
  assert.match(String(r.headers['x-request-id']), /^[0-9a-f-]{36}$/, `${what}: x-request-id`);
}

/** Pages: helmet's headers for documents as well. */
function assertDocumentHeaders(r: LightMyRequestResponse, what: string) {
  assertSecurityHeaders(r, what);
  const h = r.headers;
  assert.match(String(h['content-type']), /^text\/html/, `${what}: a page`);
  assert.equal(h['referrer-policy'], 'no-referrer', `${what}: referrer-policy`);
  assert.equal(h['cross-origin-opener-policy'], 'same-origin', `${what}: coop`);
  assert.equal(h['cross-origin-resource-policy'], 'same-origin', `${what}: corp`);
  assert.equal(h['x-dns-prefetch-control'], 'off', `${what}: x-dns-prefetch-control`);
  assert.equal(h['origin-agent-cluster'], '?1', `${what}: origin-agent-cluster`);
}

describe('security headers', () => {
  it('are sent on success, JSONP, client errors, 404s, health and server errors', async (t) => {
    const h = await build(t, 'sqlite');
    const user = await h.createUser();
    const { secret } = await h.createToken(user.id);
    const cases: Array<[string, () => Promise<LightMyRequestResponse>, number]> = [
      ['v1 ping', () => h.api({ method: 'GET', path: '/ping' }), 200],
      [
        'v1 self',
        () => h.api({ method: 'GET', path: '/tokens/self', headers: { 'x-ripple-token': secret } }),
        200,
      ],
      ['jsonp', () => h.api({ method: 'GET', path: '/ping?callback=cb' }), 200],
      ['pls200', () => h.api({ method: 'GET', path: '/tokens?pls200' }), 200],
      [
        'bad json',
        () =>
          h.api({
            method: 'POST',
            path: '/tokens',
            headers: { 'content-type': 'application/json' },
            payload: '{',
          }),
        400,
      ],
      ['missing fields', () => h.api({ method: 'POST', path: '/tokens', payload: {} }), 422],
      ['no credential', () => h.api({ method: 'GET', path: '/tokens' }), 401],
      ['api 404', () => h.api({ method: 'GET', path: '/nope' }), 404],
      ['root 404', () => h.app.inject({ method: 'GET', url: '/nothing/here' }), 404],
      [
        'text that is not JSON',
        () =>
          h.api({ method: 'POST', path: '/tokens', headers: { 'content-type': 'text/plain' }, payload: 'x' }),
        400,
      ],
      ['live', () => h.app.inject({ method: 'GET', url: '/health/live' }), 200],
      ['ready', () => h.app.inject({ method: 'GET', url: '/health/ready' }), 200],
    ];
    for (const [what, send, status] of cases) {
      const r = await send();
      assert.equal(r.statusCode, status, `${what}: ${r.body}`);
      assertApiHeaders(r, what);
      // the document-only headers stay off JSON answers
      assert.equal(r.headers['cross-origin-opener-policy'], undefined, `${what}: no coop`);
    }
    // JSONP must stay loadable by a script tag on another site.
    const jsonp = await h.api({ method: 'GET', path: '/ping?callback=cb' });
    assert.equal(jsonp.headers['cross-origin-resource-policy'], 'cross-origin');
    assert.match(jsonp.body, /^\/\*\*\/cb\(/);

    // A database failure: the 500 envelope carries the headers too.
    await h.store.close();
    for (const [what, send] of [
      [
        '500 on self',
        () => h.api({ method: 'GET', path: '/tokens/self', headers: { 'x-ripple-token': secret } }),
      ],
      ['503 ready', () => h.app.inject({ method: 'GET', url: '/health/ready' })],
    ] as const) {
      const r = await send();
      assert.ok(r.statusCode === 500 || r.statusCode === 503, `${what}: ${r.statusCode} ${r.body}`);
      assert.equal(body(r).code, r.statusCode);
      assertApiHeaders(r, what);
    }
  });

  it("pages add helmet's headers for documents and keep their own policy", async (t) => {
    const h = await build(t, 'sqlite');
    const login = await h.app.inject({ method: 'GET', url: '/login' });
    assert.equal(login.statusCode, 200);
    assertDocumentHeaders(login, 'sign-in page');
    // the page's own policy (its stylesheet's hash), not the API's or helmet's
    assert.match(String(login.headers['content-security-policy']), /^default-src 'none'; style-src 'sha256-/);
    assert.equal(login.headers['cache-control'], 'no-store');

    const tokensPage = await h.app.inject({ method: 'GET', url: '/tokens' });
    assert.ok(tokensPage.statusCode < 400, `token page: ${tokensPage.statusCode}`);
    assertSecurityHeaders(tokensPage, 'token page');
    assert.equal(tokensPage.headers['referrer-policy'], 'no-referrer');

    const docs = await h.app.inject({ method: 'GET', url: '/api/docs/' });
    assert.equal(docs.statusCode, 200);
    assertDocumentHeaders(docs, 'API reference');
    assert.match(String(docs.headers['content-security-policy']), /default-src 'self'/);
    // the API document next to it is an API answer
    const openapi = await h.app.inject({ method: 'GET', url: '/api/v1/openapi.json' });
    assertApiHeaders(openapi, 'openapi.json');
  });
});
