// The pages' shared look without a browser: every family of pages carries the one theme and links the
// icon, and its Content-Security-Policy lets the icon load; the README shows the token page's screenshot.
import { describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { readFileSync } from 'node:fs';
import { build } from '../helpers/app.ts';
import { InjectBrowser } from '../helpers/inject-browser.ts';
import { authorizeUrl, pkcePair, registerClient } from '../helpers/oauth.ts';
import { THEME_CSS } from '../../src/web/theme.ts';

const root = new URL('../../', import.meta.url);

/** Width and height of a PNG, from its IHDR chunk. */
function pngSize(path: string): { width: number; height: number } {
  const bytes = readFileSync(new URL(path, root));
  assert.equal(bytes.subarray(1, 4).toString('latin1'), 'PNG', `${path} is a PNG`);
  return { width: bytes.readUInt32BE(16), height: bytes.readUInt32BE(20) };
}

describe('the pages share the theme and the icon [sqlite]', () => {
  it('sign-in, consent, token page and confirmation pages carry the theme, the icon and a policy for it', async (t) => {
    const h = await build(t, 'sqlite');
    const user = await h.createUser();
    const maker = await h.createUser();
    const client = await registerClient(h, { ownerId: maker.id, name: 'Score Tracker' });
    const token = await h.createToken(user.id, { description: 'uploader' });
    const browser = new InjectBrowser(h.app);
    const pages = new Map([['sign-in', await browser.get('/login')]]);
    await browser.signIn(user);
    pages.set('consent', await browser.get(authorizeUrl({ client, challenge: pkcePair().challenge })));
    pages.set('token page', await browser.get('/tokens'));
    pages.set('revoke confirmation', await browser.get(`/tokens/${token.id}/revoke`));
    pages.set('sign-out-everywhere confirmation', await browser.get('/tokens/sign-out-everywhere'));
    pages.set('no such token', await browser.get('/tokens/999999/revoke'));
    pages.set('signed in', await browser.get('/login'));
    for (const [name, page] of pages) {
      assert.match(String(page.headers['content-type']), /^text\/html/, name);
      assert.ok(page.body.includes(`<style>${THEME_CSS}`), `${name}: the stylesheet starts with the theme`);
      assert.match(page.body, /<link rel="icon" href="\/favicon\.svg" type="image\/svg\+xml" \/>/, name);
      const policy = String(page.headers['content-security-policy']);
      assert.match(policy, /^default-src 'none'; style-src 'sha256-[^']+'; img-src 'self'[ ;]/, name);
    }
    assert.equal(pages.get('consent')?.statusCode, 200);
  });

  it('the README tour shows the desktop screenshot, and both screenshots are committed', () => {
    const readme = readFileSync(new URL('README.md', root), 'utf8');
    const tour = /^## A five-minute tour\n([\s\S]*?)(?=^## )/m.exec(readme)?.[1] ?? '';
    assert.match(tour, /!\[[^\]]+\]\(docs\/screenshots\/tokens-page\.png\)/);
    assert.match(tour, /`\/login`/);
    assert.match(tour, /Connected\s+applications/);
    assert.equal(pngSize('docs/screenshots/tokens-page.png').width, 1024);
    assert.equal(pngSize('docs/screenshots/tokens-page-phone.png').width, 390);
  });
});
