// The account pages' stylesheets and script are files the server serves itself: each page links them,
// each answers with its content type, may be kept for good (its address changes with its content), and
// the page's policy lets them load and nothing else from elsewhere.
import { describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { build } from '../helpers/app.ts';
import { InjectBrowser } from '../helpers/inject-browser.ts';

/** The addresses of the stylesheets and scripts a page links. */
const linked = (body: string): string[] => [
  ...[...body.matchAll(/<link rel="stylesheet" href="([^"]+)"/g)].map((m) => m[1] ?? ''),
  ...[...body.matchAll(/<script src="([^"]+)"/g)].map((m) => m[1] ?? ''),
];

describe('the account pages’ files [sqlite]', () => {
  it('are linked by the pages and served with their type, for good, running nothing of their own', async (t) => {
    const h = await build(t, 'sqlite');
    const user = await h.createUser();
    const browser = new InjectBrowser(h.app);
    await browser.signIn(user);
    const pages = ['/tokens', '/security-log', '/applications', '/applications/new'];
    const seen = new Set<string>();
    for (const path of pages) {
      const page = await browser.get(path);
      assert.equal(page.statusCode, 200, path);
      const files = linked(page.body);
      assert.ok(files.some((f) => f.endsWith('.css')) && files.some((f) => f.endsWith('.js')), path);
      const policy = String(page.headers['content-security-policy']);
      assert.match(policy, /style-src-elem 'sha256-[^']+' 'self'/, path);
      assert.match(policy, /script-src 'self'/, path);
      for (const file of files) seen.add(file);
    }
    for (const file of seen) {
      assert.match(file, /^\/assets\/[a-z]+-[\w-]{12}\.(css|js)$/, file);
      const r = await h.app.inject({ method: 'GET', url: file });
      assert.equal(r.statusCode, 200, file);
      assert.equal(
        r.headers['content-type'],
        file.endsWith('.css') ? 'text/css; charset=utf-8' : 'text/javascript; charset=utf-8',
        file,
      );
      assert.equal(r.headers['cache-control'], 'public, max-age=31536000, immutable', file);
      assert.equal(r.headers['x-content-type-options'], 'nosniff', file);
      assert.match(String(r.headers['content-security-policy']), /^default-src 'none'/, file);
      assert.ok(r.body.length > 100, file);
    }
    // the token page's family, and Your applications' own rules after it
    assert.equal([...seen].filter((f) => f.endsWith('.css')).length, 2);
  });
});
