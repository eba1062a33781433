// A browser for the front channel over real sockets: fetch with a cookie jar, following no redirects by
// itself; and a person signing in and allowing an application on the consent page with it.
import assert from 'node:assert/strict';
import type { TestUser } from './app.ts';

/** A browser for the front channel: fetch with a cookie jar, following no redirects by itself. */
export class FetchBrowser {
  private readonly jar = new Map<string, string>();

  async go(url: string, init: { method?: string; form?: Record<string, string> } = {}): Promise<Response> {
    const headers: Record<string, string> = {
      cookie: [...this.jar].map(([k, v]) => `${k}=${v}`).join('; '),
    };
    let body: string | undefined;
    if (init.form) {
      headers['content-type'] = 'application/x-www-form-urlencoded';
      body = new URLSearchParams(init.form).toString();
    }
    const response = await fetch(url, { method: init.method ?? 'GET', headers, body, redirect: 'manual' });
    for (const line of response.headers.getSetCookie()) {
      const [pair = ''] = line.split(';');
      const eq = pair.indexOf('=');
      const name = pair.slice(0, eq).trim();
      const value = pair.slice(eq + 1).trim();
      if (value === '' || /max-age=0/i.test(line)) this.jar.delete(name);
      else this.jar.set(name, value);
    }
    return response;
  }
}

const field = (html: string, name: string): string => {
  const m = new RegExp(`name="${name}" value="([^"]*)"`).exec(html);
  if (!m?.[1]) throw new Error(`no ${name} field in:\n${html}`);
  return m[1].replace(/&amp;/g, '&');
};

/** Signs in and clicks Allow, the way a person would; returns the URL the browser is sent back to. */
export async function consentInBrowser(origin: string, authorizationUrl: URL, user: TestUser): Promise<URL> {
  const browser = new FetchBrowser();
  const toLogin = await browser.go(authorizationUrl.href);
  assert.equal(toLogin.status, 303);
  const loginUrl = new URL(toLogin.headers.get('location') as string, origin);
  const loginPage = await browser.go(loginUrl.href);
  const html = await loginPage.text();
  const signedIn = await browser.go(`${origin}/login`, {
    method: 'POST',
    form: {
      _csrf: field(html, '_csrf'),
      next: field(html, 'next'),
      username: user.username,
      password: user.password,
    },
  });
  assert.equal(signedIn.status, 303);
  const consent = await browser.go(new URL(signedIn.headers.get('location') as string, origin).href);
  assert.equal(consent.status, 200);
  const page = await consent.text();
  const form: Record<string, string> = { decision: 'allow' };
  for (const m of page.matchAll(/<input type="hidden" name="([^"]+)" value="([^"]*)"/g))
    form[m[1] as string] = (m[2] as string).replace(/&amp;/g, '&');
  const answer = await browser.go(`${origin}/oauth/authorize`, { method: 'POST', form });
  assert.equal(answer.status, 303);
  return new URL(answer.headers.get('location') as string);
}
