// Web pages over app.inject: a browser that keeps cookies (and signs in), form bodies, and the CSRF token
// and hidden fields of a page's form.
import type { FastifyInstance, InjectOptions, LightMyRequestResponse } from 'fastify';
import type { Harness, TestUser } from './app.ts';
import { nowSeconds } from '../../src/auth/clock.ts';

/** A form body (application/x-www-form-urlencoded), leaving out undefined fields. */
export const form = (fields: Record<string, string | undefined>): string => {
  const body = new URLSearchParams();
  for (const [k, v] of Object.entries(fields)) if (v !== undefined) body.append(k, v);
  return body.toString();
};

export const FORM = { 'content-type': 'application/x-www-form-urlencoded' };

/** The hidden CSRF token of the first form on a page. */
export function csrfOf(html: string): string {
  const match = /name="_csrf" value="([^"]+)"/.exec(html);
  if (!match?.[1]) throw new Error(`no CSRF token on the page:\n${html}`);
  return match[1];
}

/** The new token's secret a token page shows (once), if it shows one. */
export const newSecretOf = (html: string): string | undefined =>
  /id="new-token"[^>]*value="([0-9a-f]{32})"/s.exec(html)?.[1];

/** Every hidden field on a page, unescaped (the consent form's carry the authorization request). */
export function hiddenFieldsOf(html: string): Record<string, string> {
  const out: Record<string, string> = {};
  for (const m of html.matchAll(/<input type="hidden" name="([^"]+)" value="([^"]*)"\s*\/?>/g))
    out[m[1] as string] = (m[2] as string)
      .replace(/&amp;/g, '&')
      .replace(/&quot;/g, '"')
      .replace(/&#39;/g, "'")
      .replace(/&lt;/g, '<')
      .replace(/&gt;/g, '>');
  return out;
}

/** app.inject with a cookie jar, like a browser that does not follow redirects. */
export class InjectBrowser {
  readonly cookies = new Map<string, string>();
  private readonly app: FastifyInstance;
  constructor(app: FastifyInstance) {
    this.app = app;
  }

  async request(options: InjectOptions): Promise<LightMyRequestResponse> {
    const response = await this.app.inject({ ...options, cookies: Object.fromEntries(this.cookies) });
    for (const c of response.cookies as Array<{
      name: string;
      value: string;
      expires?: Date;
      maxAge?: number;
    }>) {
      const expired =
        c.value === '' || c.maxAge === 0 || (c.expires !== undefined && c.expires.getTime() < Date.now());
      if (expired) this.cookies.delete(c.name);
      else this.cookies.set(c.name, c.value);
    }
    return response;
  }

  get = (url: string) => this.request({ method: 'GET', url });
  post = (url: string, fields: Record<string, string | undefined>) =>
    this.request({ method: 'POST', url, headers: FORM, payload: form(fields) });

  async signIn(user: TestUser): Promise<void> {
    const page = await this.get('/login');
    const r = await this.post('/login', {
      _csrf: csrfOf(page.body),
      username: user.username,
      password: user.password,
    });
    if (r.statusCode !== 303 || !this.cookies.has('rt'))
      throw new Error(`sign-in failed: ${r.statusCode} ${r.body}`);
  }
}

/** A new user, signed in in a browser of their own. */
export async function signedInUser(h: Harness): Promise<{ user: TestUser; browser: InjectBrowser }> {
  const user = await h.createUser();
  const browser = new InjectBrowser(h.app);
  await browser.signIn(user);
  return { user, browser };
}

/** Makes the user's sessions' last password entry older than sudo mode allows (an hour ago). */
export const leaveSudoMode = (h: Harness, userId: number) =>
  h.store.db
    .updateTable('tokens')
    .set({ password_at: nowSeconds() - 3600 })
    .where('user_id', '=', userId)
    .where('session', '=', 1)
    .execute();
