// Opening the server in a browser: the root and {base_url} lead a browser to the token page, and any other
// unknown address outside {base_url} is a small HTML 404 page, while API clients asking the same (and
// anything under {base_url}) keep the JSON 404; the icon; and the API served at the root (BASE_PATH empty).
import { describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { build, body } from '../helpers/app.ts';
import { prefersHtml } from '../../src/http/errors.ts';
import { FAVICON_SVG } from '../../src/web/theme.ts';

/** What Chromium and Firefox send when they open a page. */
const BROWSER_ACCEPT = 'text/html,application/xhtml+xml,application/xml;q=0.9,image/avif,*/*;q=0.8';

describe('prefersHtml', () => {
  it('is true for the Accept of a browser opening a page', () => {
    for (const accept of [
      BROWSER_ACCEPT,
      'text/html,application/xhtml+xml,application/xml;q=0.9,*/*;q=0.8',
      'text/html',
      'application/xhtml+xml',
      'application/json;q=0.5, text/html',
    ])
      assert.equal(prefersHtml(accept), true, accept);
  });

  it("is false for API clients: none, curl's */*, JSON first, or HTML that a wildcard only allows", () => {
    for (const accept of [
      undefined,
      '',
      '*/*',
      'application/json',
      'application/json, text/plain, */*',
      'application/json, text/html',
      'text/html;q=0.5, application/json',
      'text/*',
      'text/html;q=0',
      'text/html;q=0.8, */*',
    ])
      assert.equal(prefersHtml(accept), false, String(accept));
  });
});

describe('the server root in a browser [sqlite]', () => {
  it('sends a browser at /, /api and /api/ to the token page, which sends it on to sign-in', async (t) => {
    const h = await build(t, 'sqlite');
    for (const url of ['/', '/api', '/api/', '/?from=bookmark'])
      for (const method of ['GET', 'HEAD'] as const) {
        const r = await h.app.inject({ method, url, headers: { accept: BROWSER_ACCEPT } });
        assert.equal(r.statusCode, 303, `${method} ${url}`);
        assert.equal(r.headers.location, '/tokens', `${method} ${url}`);
        assert.equal(r.headers.vary, 'Accept');
        assert.equal(r.headers['x-real-404'], undefined);
      }
    const page = await h.app.inject({ url: '/tokens', headers: { accept: BROWSER_ACCEPT } });
    assert.equal(page.statusCode, 303);
    assert.equal(page.headers.location, '/login?next=%2Ftokens');
  });

  it('answers API clients at the same paths with the JSON 404 and X-Real-404, as any unknown path', async (t) => {
    const h = await build(t, 'sqlite');
    const requests = [
      ...['/', '/api', '/api/'].flatMap((url) =>
        [undefined, '*/*', 'application/json', 'application/json, text/html'].map((accept) => ({
          method: 'GET' as const,
          url,
          accept,
        })),
      ),
      // Only a GET (or HEAD) of the page itself is sent on: forms and other paths are the API's.
      { method: 'POST' as const, url: '/', accept: BROWSER_ACCEPT },
      { method: 'POST' as const, url: '/api', accept: BROWSER_ACCEPT },
      { method: 'POST' as const, url: '/nope', accept: BROWSER_ACCEPT },
      { method: 'GET' as const, url: '/nope', accept: 'application/json' },
      { method: 'GET' as const, url: '/nope', accept: '*/*' },
      { method: 'GET' as const, url: '/nope', accept: undefined },
      { method: 'GET' as const, url: '/api/nope', accept: BROWSER_ACCEPT },
      { method: 'GET' as const, url: '/api/v1/nope', accept: BROWSER_ACCEPT },
      { method: 'GET' as const, url: '/api/v1', accept: BROWSER_ACCEPT },
    ];
    for (const { method, url, accept } of requests) {
      const what = `${method} ${url} (${accept})`;
      const r = await h.app.inject({ method, url, headers: accept === undefined ? {} : { accept } });
      assert.equal(r.statusCode, 404, what);
      assert.equal(r.headers['x-real-404'], 'yes', what);
      assert.match(String(r.headers['content-type']), /^application\/json/, what);
      assert.deepEqual(body(r), { code: 404, message: 'No such endpoint.' }, what);
      assert.equal(r.headers.vary, undefined, what);
    }
    // pls200 and JSONP belong to the API, whatever the Accept.
    const pls200 = await h.app.inject({ url: '/api?pls200', headers: { accept: BROWSER_ACCEPT } });
    assert.equal(pls200.statusCode, 200);
    assert.equal(body(pls200).code, 404);
    const jsonp = await h.app.inject({ url: '/api/?callback=cb', headers: { accept: BROWSER_ACCEPT } });
    assert.match(jsonp.body, /cb\(\{"code":404/);
  });

  it('answers a browser opening an unknown address outside /api with a small HTML 404 page and a way back', async (t) => {
    const h = await build(t, 'sqlite');
    for (const url of ['/nope', '/tokens/nope/deeper', '/apix', '/nope?x=1'])
      for (const method of ['GET', 'HEAD'] as const) {
        const r = await h.app.inject({ method, url, headers: { accept: BROWSER_ACCEPT } });
        const what = `${method} ${url}`;
        assert.equal(r.statusCode, 404, what);
        assert.match(String(r.headers['content-type']), /^text\/html; charset=utf-8/, what);
        assert.equal(r.headers['x-real-404'], 'yes', what);
        assert.equal(r.headers.vary, 'Accept', what);
        assert.equal(r.headers['cache-control'], 'no-store', what);
        assert.match(String(r.headers['content-security-policy']), /^default-src 'none'/, what);
        assert.equal(r.headers['x-frame-options'], 'DENY', what);
        if (method === 'GET') {
          assert.match(r.body, /<h1>Page not found<\/h1>/, what);
          assert.match(r.body, /<a href="\/tokens">Go to your API tokens<\/a>/, what);
          assert.doesNotMatch(r.body, /nope/, 'the address is not written back into the page');
        }
      }
    // A request with the API's pls200 or callback is an API client's, whatever its Accept.
    for (const url of ['/nope?pls200', '/nope?callback=cb']) {
      const r = await h.app.inject({ url, headers: { accept: BROWSER_ACCEPT } });
      assert.match(String(r.headers['content-type']), /^application\/json/, url);
      assert.equal(body(r).code, 404, url);
    }
  });

  it('serves the icon at /favicon.svg and /favicon.ico', async (t) => {
    const h = await build(t, 'sqlite');
    for (const url of ['/favicon.svg', '/favicon.ico']) {
      const r = await h.app.inject({ url, headers: { accept: 'image/*' } });
      assert.equal(r.statusCode, 200, url);
      assert.equal(r.headers['content-type'], 'image/svg+xml', url);
      assert.equal(r.body, FAVICON_SVG);
      assert.match(r.body, /^<svg xmlns="http:\/\/www\.w3\.org\/2000\/svg"/);
      assert.equal(r.headers['cache-control'], 'public, max-age=86400');
      assert.match(String(r.headers['content-security-policy']), /^default-src 'none'/);
      assert.doesNotMatch(r.body, /<script|on\w+=/i);
    }
  });
});

describe('BASE_PATH empty: the API at the server root [sqlite]', () => {
  it('starts, serves the v1 API and its 404 and 405 at the root, and the pages beside it', async (t) => {
    const h = await build(t, 'sqlite', { BASE_PATH: '' });
    assert.equal(h.config.basePath, '');
    const user = await h.createUser();
    const token = await h.createToken(user.id, { description: 'at the root' });
    const ping = await h.app.inject({ url: '/v1/ping', headers: { 'x-ripple-token': token.secret } });
    assert.equal(ping.statusCode, 200, ping.body);
    assert.equal(body(ping).user_id, user.id);
    const list = await h.app.inject({ url: '/v1/tokens', headers: { 'x-ripple-token': token.secret } });
    assert.equal(list.statusCode, 200, list.body);
    assert.equal((body(list).tokens as unknown[]).length, 1);
    assert.equal((await h.app.inject({ url: '/api/v1/ping' })).statusCode, 404);

    // Every unknown path is the API's 404 (pls200 included); a known path's other method a 405.
    for (const url of ['/v1/nope', '/nope', '/']) {
      const r = await h.app.inject({ url });
      assert.equal(r.statusCode, 404, url);
      assert.equal(r.headers['x-real-404'], 'yes', url);
      assert.deepEqual(body(r), { code: 404, message: 'No such endpoint.' }, url);
    }
    const forced = await h.app.inject({ url: '/v1/nope?pls200' });
    assert.equal(forced.statusCode, 200);
    assert.equal(body(forced).code, 404);
    const put = await h.app.inject({ method: 'PUT', url: '/v1/tokens' });
    assert.equal(put.statusCode, 405);
    assert.equal(put.headers.allow, 'GET, HEAD, POST');

    // Every path is the API's: a browser opening an unknown one gets the envelope too.
    const unknown = await h.app.inject({ url: '/nope', headers: { accept: BROWSER_ACCEPT } });
    assert.equal(unknown.statusCode, 404);
    assert.equal(unknown.headers['x-real-404'], 'yes');
    assert.deepEqual(body(unknown), { code: 404, message: 'No such endpoint.' });
    // A browser at the root still goes to the token page; the pages, probes and reference are there.
    const home = await h.app.inject({ url: '/', headers: { accept: BROWSER_ACCEPT } });
    assert.equal(home.statusCode, 303);
    assert.equal(home.headers.location, '/tokens');
    assert.equal((await h.app.inject({ url: '/login' })).statusCode, 200);
    assert.equal((await h.app.inject({ url: '/tokens' })).headers.location, '/login?next=%2Ftokens');
    assert.equal((await h.app.inject({ url: '/health/live' })).statusCode, 200);
    assert.equal((await h.app.inject({ url: '/favicon.ico' })).statusCode, 200);
    const doc = await h.app.inject({ url: '/v1/openapi.json' });
    assert.equal(doc.statusCode, 200);
    const paths = Object.keys((doc.json() as { paths: object }).paths);
    assert.ok(paths.includes('/v1/tokens') && paths.includes('/login'), paths.join(' '));
    assert.equal((await h.app.inject({ url: '/docs' })).statusCode, 200);
  });
});
