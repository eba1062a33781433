#!/usr/bin/env node
// "Sign in with tokend" through OpenID Connect with openid-client (panva's certified client, npm install
// openid-client): discovery, the code flow with PKCE, state and nonce, the id_token's claims, userinfo.
//
//   TOKEND_URL=https://tokend.example CLIENT_ID=… [CLIENT_SECRET=…] [PORT=8765] node docs/examples/openid-client-login.mjs
//
// Register the app with the redirect URI http://127.0.0.1:PORT/callback. It prints a URL: open it in a
// browser, sign in and allow the app; the browser comes back to this program's loopback listener.
import { createServer } from 'node:http';
import * as client from 'openid-client';

const TOKEND_URL = process.env.TOKEND_URL ?? 'http://127.0.0.1:8080';
const CLIENT_ID = process.env.CLIENT_ID;
const CLIENT_SECRET = process.env.CLIENT_SECRET || undefined;
const PORT = Number(process.env.PORT ?? 8765);
const REDIRECT_URI = `http://127.0.0.1:${PORT}/callback`;

if (!CLIENT_ID) {
  console.error('Set CLIENT_ID (and CLIENT_SECRET for a confidential app): see docs/oauth.md.');
  process.exit(2);
}

// 1. Discovery (/.well-known/openid-configuration). A tokend on plain http (on your own machine) needs
//    allowInsecureRequests; never in production.
const config = await client.discovery(
  new URL(TOKEND_URL),
  CLIENT_ID,
  CLIENT_SECRET,
  CLIENT_SECRET ? undefined : client.None(),
  TOKEND_URL.startsWith('http:') ? { execute: [client.allowInsecureRequests] } : undefined,
);

// 2. The authorization request: PKCE, state and nonce, kept here until the browser comes back.
const verifier = client.randomPKCECodeVerifier();
const state = client.randomState();
const nonce = client.randomNonce();
const url = client.buildAuthorizationUrl(config, {
  redirect_uri: REDIRECT_URI,
  scope: 'openid profile',
  code_challenge: await client.calculatePKCECodeChallenge(verifier),
  code_challenge_method: 'S256',
  state,
  nonce,
});
console.log(`open this URL in your browser: ${url.href}`);

// 3. The callback: the code exchanged; openid-client checks state, iss, and the id_token's iss, aud, exp
//    and nonce.
const server = createServer(async (request, response) => {
  const current = new URL(request.url ?? '/', REDIRECT_URI);
  if (current.pathname !== '/callback') return response.writeHead(404).end();
  try {
    const tokens = await client.authorizationCodeGrant(config, current, {
      pkceCodeVerifier: verifier,
      expectedState: state,
      expectedNonce: nonce,
      idTokenExpected: true,
    });
    const claims = tokens.claims();
    const info = await client.fetchUserInfo(config, tokens.access_token, claims.sub);
    console.log(
      `signed in: sub=${claims.sub} preferred_username=${claims.preferred_username} auth_time=${claims.auth_time}`,
    );
    console.log(`userinfo: ${JSON.stringify(info)}`);
    response.writeHead(200, { 'content-type': 'text/plain' }).end('Signed in. You can close this tab.\n');
    server.close();
  } catch (err) {
    console.error(`sign-in failed: ${err.message}`);
    response.writeHead(400, { 'content-type': 'text/plain' }).end('Sign-in failed.\n');
    server.close();
    process.exitCode = 1;
  }
});
server.listen(PORT, '127.0.0.1');
