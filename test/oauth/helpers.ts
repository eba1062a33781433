// Helpers for the OAuth tests: registered clients, PKCE pairs, and a cookie-keeping "browser" over inject.
import { createHash, randomBytes } from 'node:crypto';
import type { FastifyInstance, InjectOptions, LightMyRequestResponse } from 'fastify';
import { createClient } from '../../src/oauth/clients.ts';
import { nowSeconds } from '../../src/clock.ts';
import type { Harness, TestUser } from '../helpers/app.ts';

export const REDIRECT_URI = 'https://app.example/callback';

export interface TestClient {
  id: string;
  secret: string | undefined;
  redirectUri: string;
}

export async function registerClient(
  h: Harness,
  options: { ownerId: number; public?: boolean; name?: string; avatar?: string; redirectUris?: string[] },
): Promise<TestClient> {
  const redirectUris = options.redirectUris ?? [REDIRECT_URI];
  const { client, secret } = await createClient(h.store.db, {
    name: options.name ?? 'Test App',
    ownerId: options.ownerId,
    avatar: options.avatar ?? '',
    redirectUris,
    public: options.public ?? false,
    now: nowSeconds(),
  });
  return { id: client.id, secret, redirectUri: redirectUris[0] as string };
}

export function pkcePair(): { verifier: string; challenge: string } {
  const verifier = randomBytes(32).toString('base64url');
  return { verifier, challenge: createHash('sha256').update(verifier).digest('base64url') };
}

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

/** Every hidden field of the consent form (the authorization request it carries). */
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

export interface AuthorizeParams {
  client: TestClient;
  challenge: string;
  scope?: string;
  state?: string;
  redirectUri?: string;
  method?: string;
}

export function authorizeUrl(p: AuthorizeParams): string {
  const query = new URLSearchParams({
    response_type: 'code',
    client_id: p.client.id,
    redirect_uri: p.redirectUri ?? p.client.redirectUri,
    code_challenge: p.challenge,
    code_challenge_method: p.method ?? 'S256',
  });
  if (p.scope !== undefined) query.set('scope', p.scope);
  if (p.state !== undefined) query.set('state', p.state);
  return `/oauth/authorize?${query}`;
}

/** A signed-in browser approves the request on the consent page; returns the redirect's URL. */
export async function approve(browser: InjectBrowser, p: AuthorizeParams, decision = 'allow'): Promise<URL> {
  const page = await browser.get(authorizeUrl(p));
  if (page.statusCode !== 200) throw new Error(`consent page: ${page.statusCode} ${page.body}`);
  const answer = await browser.post('/oauth/authorize', { ...hiddenFieldsOf(page.body), decision });
  if (answer.statusCode !== 303) throw new Error(`consent answer: ${answer.statusCode} ${answer.body}`);
  return new URL(answer.headers.location as string);
}

/** A full front-channel run (asking for consent only when not given before): an authorization code. */
export async function obtainCode(browser: InjectBrowser, p: AuthorizeParams): Promise<string> {
  const first = await browser.get(authorizeUrl(p));
  const back =
    first.statusCode === 302 ? new URL(first.headers.location as string) : await approve(browser, p);
  const code = back.searchParams.get('code');
  if (!code) throw new Error(`no code in ${back.toString()}`);
  return code;
}

export async function exchangeCode(
  h: Harness,
  client: TestClient,
  code: string,
  verifier: string | undefined,
  extra: Record<string, string | undefined> = {},
): Promise<LightMyRequestResponse> {
  return h.app.inject({
    method: 'POST',
    url: '/oauth/token',
    headers: FORM,
    payload: form({
      grant_type: 'authorization_code',
      code,
      redirect_uri: client.redirectUri,
      code_verifier: verifier,
      client_id: client.id,
      client_secret: client.secret,
      ...extra,
    }),
  });
}

export function backChannel(
  h: Harness,
  path: string,
  client: TestClient,
  fields: Record<string, string | undefined>,
): Promise<LightMyRequestResponse> {
  return h.app.inject({
    method: 'POST',
    url: path,
    headers: FORM,
    payload: form({ client_id: client.id, client_secret: client.secret, ...fields }),
  });
}
