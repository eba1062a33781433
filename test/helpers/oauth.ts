// The OAuth flows over app.inject: registered clients, PKCE pairs, the authorization request, consent
// through a signed-in InjectBrowser (./inject-browser.ts), the code exchange and back-channel calls.
import { createHash, randomBytes } from 'node:crypto';
import type { LightMyRequestResponse } from 'fastify';
import { createClient } from '../../src/oauth/clients.ts';
import { nowSeconds } from '../../src/auth/clock.ts';
import { actOutsideRequest } from '../../src/auth/security-log.ts';
import type { Harness } from './app.ts';
import { FORM, csrfOf, form, hiddenFieldsOf, type InjectBrowser } from './inject-browser.ts';

export const REDIRECT_URI = 'https://app.example/callback';

export interface TestClient {
  id: string;
  secret: string | undefined;
  redirectUri: string;
}

/** Numbers the default names: one owner's applications each have their own name. */
let clientCounter = 0;

export async function registerClient(
  h: Pick<Harness, 'app' | 'store'>,
  options: { ownerId: number; public?: boolean; name?: string; avatar?: string; redirectUris?: string[] },
): Promise<TestClient> {
  const redirectUris = options.redirectUris ?? [REDIRECT_URI];
  const { client, secret } = await createClient(
    h.store.db,
    {
      name: options.name ?? `Test App ${++clientCounter}`,
      ownerId: options.ownerId,
      avatar: options.avatar ?? '',
      redirectUris,
      public: options.public ?? false,
      now: nowSeconds(),
    },
    actOutsideRequest('cli', nowSeconds()),
  );
  return { id: client.id, secret, redirectUri: redirectUris[0] as string };
}

export function pkcePair(): { verifier: string; challenge: string } {
  const verifier = randomBytes(32).toString('base64url');
  return { verifier, challenge: createHash('sha256').update(verifier).digest('base64url') };
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
  h: Pick<Harness, 'app' | 'store'>,
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
  h: Pick<Harness, 'app' | 'store'>,
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

export interface IssuedTokens {
  access_token: string;
  refresh_token: string;
}

/** A new grant: consent (when not given before), the code and its exchange; the tokens it issued. */
export async function obtainTokens(
  h: Pick<Harness, 'app' | 'store'>,
  browser: InjectBrowser,
  client: TestClient,
  scope = 'read_confidential',
): Promise<IssuedTokens> {
  const { verifier, challenge } = pkcePair();
  const code = await obtainCode(browser, { client, challenge, scope });
  const exchanged = await exchangeCode(h, client, code, verifier);
  if (exchanged.statusCode !== 200)
    throw new Error(`code exchange: ${exchanged.statusCode} ${exchanged.body}`);
  return exchanged.json() as IssuedTokens;
}

/** grant_type=refresh_token at the token endpoint. */
export const refreshTokens = (
  h: Pick<Harness, 'app' | 'store'>,
  client: TestClient,
  refreshToken: string,
): Promise<LightMyRequestResponse> =>
  backChannel(h, '/oauth/token', client, { grant_type: 'refresh_token', refresh_token: refreshToken });

/** The id_token of a token response, checked by a relying party with jose against the server's JWKS. */
export async function verifyIdToken(
  h: Pick<Harness, 'app'>,
  idToken: string,
  expected: { issuer: string; audience: string; nonce?: string | undefined; currentDate?: Date },
): Promise<Record<string, unknown>> {
  const { createLocalJWKSet, jwtVerify } = await import('jose');
  const jwks = await h.app.inject({ method: 'GET', url: '/oauth/jwks' });
  if (jwks.statusCode !== 200) throw new Error(`jwks: ${jwks.statusCode} ${jwks.body}`);
  const { payload } = await jwtVerify(idToken, createLocalJWKSet(jwks.json()), {
    issuer: expected.issuer,
    audience: expected.audience,
    algorithms: ['RS256'],
    ...(expected.currentDate ? { currentDate: expected.currentDate } : {}),
  });
  // What an RP does with the nonce it put in the user's session (OpenID Connect Core §3.1.3.7).
  if (expected.nonce !== undefined && payload.nonce !== expected.nonce)
    throw new Error(`nonce mismatch: ${String(payload.nonce)}`);
  return payload as Record<string, unknown>;
}

/** POST /oauth/device_authorization for `client` (its secret when it has one). */
export const startDevice = (h: Pick<Harness, 'app' | 'store'>, client: TestClient, scope?: string) =>
  backChannel(h, '/oauth/device_authorization', client, { scope });

/** One poll at the token endpoint with a device code. */
export const pollDevice = (h: Pick<Harness, 'app' | 'store'>, client: TestClient, deviceCode: string) =>
  backChannel(h, '/oauth/token', client, {
    grant_type: 'urn:ietf:params:oauth:grant-type:device_code',
    device_code: deviceCode,
  });

/** A signed-in browser enters `userCode` on /device and decides; returns the last page's response. */
export async function decideOnDevicePage(
  browser: InjectBrowser,
  userCode: string,
  decision: 'allow' | 'deny',
  extra: Record<string, string> = {},
): Promise<LightMyRequestResponse> {
  const page = await browser.get(`/device?user_code=${encodeURIComponent(userCode)}`);
  if (page.statusCode !== 200) throw new Error(`device page: ${page.statusCode} ${page.body}`);
  const confirm = await browser.post('/device', { _csrf: csrfOf(page.body), user_code: userCode });
  if (confirm.statusCode !== 200) throw new Error(`device code: ${confirm.statusCode} ${confirm.body}`);
  return browser.post('/device/decide', { ...hiddenFieldsOf(confirm.body), decision, ...extra });
}
