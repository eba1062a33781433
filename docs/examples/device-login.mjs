#!/usr/bin/env node
// A command-line program that signs a user in with tokend without a browser of its own (OAuth 2.0 device
// authorization grant, RFC 8628): it prints a code, the user enters it at /device on any device where they
// are signed in, and the program, polling meanwhile, gets tokens and learns who signed in. Plain Node 24
// and fetch, no dependencies.
//
//   TOKEND_URL=http://127.0.0.1:8080 CLIENT_ID=… [CLIENT_SECRET=…] [SCOPE="openid profile"] node docs/examples/device-login.mjs
//
// Any registered app may use it (its redirect URIs play no part); without CLIENT_SECRET it is a public app.

const TOKEND_URL = (process.env.TOKEND_URL ?? 'http://127.0.0.1:8080').replace(/\/+$/, '');
const API = process.env.TOKEND_API ?? `${TOKEND_URL}/api/v1`;
const CLIENT_ID = process.env.CLIENT_ID;
const CLIENT_SECRET = process.env.CLIENT_SECRET || undefined;
const SCOPE = process.env.SCOPE ?? 'openid profile';

if (!CLIENT_ID) {
  console.error('Set CLIENT_ID (and CLIENT_SECRET for a confidential app): see docs/oauth.md.');
  process.exit(2);
}

const sleep = (s) => new Promise((resolve) => setTimeout(resolve, s * 1000));

/** A form POST to one of tokend's OAuth endpoints, authenticated as the app (Basic, or client_id alone). */
async function post(url, fields) {
  const headers = { 'content-type': 'application/x-www-form-urlencoded' };
  const form = new URLSearchParams(fields);
  if (CLIENT_SECRET) {
    const pair = `${encodeURIComponent(CLIENT_ID)}:${encodeURIComponent(CLIENT_SECRET)}`;
    headers.authorization = `Basic ${Buffer.from(pair).toString('base64')}`;
  } else form.set('client_id', CLIENT_ID);
  const response = await fetch(url, { method: 'POST', headers, body: form });
  return { status: response.status, body: await response.json() };
}

// 1. The server's metadata names the device endpoint.
const metadata = await (await fetch(`${TOKEND_URL}/.well-known/openid-configuration`)).json();

// 2. Ask for a code.
const started = await post(metadata.device_authorization_endpoint, { scope: SCOPE });
if (started.status !== 200) {
  console.error(`could not start: ${started.body.error}: ${started.body.error_description}`);
  process.exit(1);
}
const { device_code, user_code, verification_uri, verification_uri_complete, expires_in } = started.body;
let interval = started.body.interval;
console.log(`To sign in, open ${verification_uri} and enter the code ${user_code}`);
console.log(`(or open ${verification_uri_complete})`);

// 3. Poll until the user approves or denies, or the code expires.
const deadline = Date.now() + expires_in * 1000;
let tokens;
while (!tokens) {
  if (Date.now() > deadline) {
    console.error('the code expired: run me again');
    process.exit(1);
  }
  await sleep(interval);
  const polled = await post(metadata.token_endpoint, {
    grant_type: 'urn:ietf:params:oauth:grant-type:device_code',
    device_code,
  });
  if (polled.status === 200) tokens = polled.body;
  else if (polled.body.error === 'authorization_pending') continue;
  else if (polled.body.error === 'slow_down') interval += 5;
  else {
    // access_denied, expired_token, or anything else: this sign-in is over.
    console.error(`not signed in: ${polled.body.error}: ${polled.body.error_description}`);
    process.exit(1);
  }
}
console.log(
  `tokens: access token for ${tokens.expires_in} s, scope "${tokens.scope}", refresh token ${tokens.refresh_token ? 'yes' : 'no'}`,
);

// 4. Who signed in: the token reads itself.
const self = await fetch(`${API}/tokens/self`, {
  headers: { authorization: `Bearer ${tokens.access_token}` },
});
const me = await self.json();
if (self.status !== 200) {
  console.error(`the token does not work: ${self.status} ${me.message}`);
  process.exit(1);
}
console.log(`signed in: user_id=${me.user_id} username=${me.username} client_id=${me.client_id}`);
