#!/usr/bin/env node
// A small app that signs a user in with tokend (OAuth 2.0 authorization code + PKCE), learns who signed in,
// calls the API, and refreshes its token. Plain Node 24 and fetch, no dependencies: read it top to bottom.
//
//   TOKEND_URL=http://127.0.0.1:8080 CLIENT_ID=… [CLIENT_SECRET=…] [PORT=8765] node docs/examples/oauth-loopback.mjs
//
// Register the app first with the redirect URI http://127.0.0.1:PORT/callback, exactly (docs/oauth.md §1).
// Without CLIENT_SECRET the app is a public client (PKCE alone protects its code). It prints a URL: open it
// in a browser, sign in and allow the app; the browser comes back to this app's loopback listener.
import { createHash, randomBytes } from 'node:crypto';
import { createServer } from 'node:http';

const TOKEND_URL = (process.env.TOKEND_URL ?? 'http://127.0.0.1:8080').replace(/\/+$/, '');
const API = process.env.TOKEND_API ?? `${TOKEND_URL}/api/v1`;
const CLIENT_ID = process.env.CLIENT_ID;
const CLIENT_SECRET = process.env.CLIENT_SECRET || undefined;
const PORT = Number(process.env.PORT ?? 8765);
const SCOPE = process.env.SCOPE ?? '';
const REDIRECT_URI = `http://127.0.0.1:${PORT}/callback`;

if (!CLIENT_ID) {
  console.error('Set CLIENT_ID (and CLIENT_SECRET for a confidential app): see docs/oauth.md.');
  process.exit(2);
}

const base64url = (bytes) => Buffer.from(bytes).toString('base64url');

// 1. Where to go: the server's metadata (RFC 8414) names its endpoints.
const metadata = await (await fetch(`${TOKEND_URL}/.well-known/oauth-authorization-server`)).json();

// 2. PKCE: a random verifier kept here, its SHA-256 sent along; and a random state against forged callbacks.
const verifier = base64url(randomBytes(32));
const challenge = base64url(createHash('sha256').update(verifier).digest());
const state = base64url(randomBytes(16));
const authorize = new URL(metadata.authorization_endpoint);
authorize.search = new URLSearchParams({
  response_type: 'code',
  client_id: CLIENT_ID,
  redirect_uri: REDIRECT_URI,
  scope: SCOPE,
  state,
  code_challenge: challenge,
  code_challenge_method: 'S256',
}).toString();

/** The token endpoint, with this app's authentication: HTTP Basic for a confidential app, client_id alone else. */
async function tokenRequest(fields) {
  const headers = { 'content-type': 'application/x-www-form-urlencoded' };
  const form = new URLSearchParams(fields);
  if (CLIENT_SECRET) {
    const encode = (s) => encodeURIComponent(s).replace(/%20/g, '+');
    headers.authorization = `Basic ${Buffer.from(`${encode(CLIENT_ID)}:${encode(CLIENT_SECRET)}`).toString('base64')}`;
  } else form.set('client_id', CLIENT_ID);
  const response = await fetch(metadata.token_endpoint, { method: 'POST', headers, body: form });
  const body = await response.json();
  if (!response.ok) {
    // slow_down (429): wait Retry-After seconds; invalid_grant: the code or refresh token is spent, sign in again.
    const wait = response.headers.get('retry-after');
    throw new Error(
      `token endpoint: ${response.status} ${body.error}: ${body.error_description}${wait ? ` (retry in ${wait} s)` : ''}`,
    );
  }
  return body;
}

let tokens;

/** A call to the API with the access token; refreshes once when tokend says the token is no longer good. */
async function callApi(path) {
  for (let attempt = 0; ; attempt++) {
    const response = await fetch(`${API}${path}`, {
      headers: { authorization: `Bearer ${tokens.access_token}` },
    });
    const challengeHeader = response.headers.get('www-authenticate') ?? '';
    // RFC 6750: invalid_token = expired, revoked or unknown: refresh (or sign in again). The status is the API's
    // own (404 on /tokens/self), so read the header, not the status.
    if (/error="invalid_token"/.test(challengeHeader) && attempt === 0 && tokens.refresh_token) {
      tokens = await tokenRequest({ grant_type: 'refresh_token', refresh_token: tokens.refresh_token });
      continue;
    }
    // insufficient_scope: this token lacks the scope named in scope="…"; ask the user for it.
    return { status: response.status, challenge: challengeHeader, body: await response.json() };
  }
}

// 3. The loopback listener that receives the browser after consent.
const code = await new Promise((resolve, reject) => {
  const server = createServer((request, response) => {
    const url = new URL(request.url ?? '/', REDIRECT_URI);
    if (url.pathname !== '/callback') {
      response.writeHead(404).end();
      return;
    }
    const finish = (status, text, outcome) => {
      response.writeHead(status, { 'content-type': 'text/plain; charset=utf-8' }).end(text);
      server.close();
      outcome();
    };
    if (url.searchParams.get('state') !== state)
      return finish(400, 'State mismatch: this answer is not for this sign-in.', () =>
        reject(new Error('state mismatch')),
      );
    if (url.searchParams.get('iss') !== null && url.searchParams.get('iss') !== metadata.issuer)
      return finish(400, 'Wrong issuer.', () => reject(new Error('issuer mismatch')));
    const error = url.searchParams.get('error');
    if (error)
      return finish(400, `Not signed in: ${error}.`, () =>
        reject(new Error(`authorization: ${error}: ${url.searchParams.get('error_description')}`)),
      );
    finish(200, 'Signed in. You can close this tab and go back to the app.', () =>
      resolve(url.searchParams.get('code')),
    );
  });
  server.on('error', reject);
  server.listen(PORT, '127.0.0.1', () => {
    console.log(`listening on ${REDIRECT_URI}`);
    console.log(`open this URL in your browser: ${authorize.href}`);
  });
});

// 4. The code for tokens (once, within 60 seconds), with the verifier that proves this app asked for it.
tokens = await tokenRequest({
  grant_type: 'authorization_code',
  code,
  redirect_uri: REDIRECT_URI,
  code_verifier: verifier,
});
console.log(
  `tokens: access token for ${tokens.expires_in} s, scope "${tokens.scope}", refresh token ${tokens.refresh_token ? 'yes' : 'no'}`,
);

// 5. Who signed in: GET /v1/tokens/self answers user_id and username for any bearer token (no scope needed).
const me = await callApi('/tokens/self');
if (me.status !== 200) throw new Error(`who am I: ${me.status} ${JSON.stringify(me.body)}`);
console.log(
  `signed in: user_id=${me.body.user_id} username=${me.body.username} client_id=${me.body.client_id}`,
);

// 6. Refresh: a new access token and a new refresh token; the old refresh token is spent (never send it again).
const before = tokens.access_token;
tokens = await tokenRequest({ grant_type: 'refresh_token', refresh_token: tokens.refresh_token });
const again = await callApi('/tokens/self');
console.log(
  `refreshed: new access token ${tokens.access_token !== before ? 'differs' : 'is the same'}, works: ${again.status === 200 && again.body.user_id === me.body.user_id ? 'yes' : 'no'}`,
);
