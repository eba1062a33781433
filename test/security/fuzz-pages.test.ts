// Property-based fuzzing of the web pages (sign-in, token page, connected applications, sign out
// everywhere, your applications) and the OAuth endpoints (authorize, token, introspect, revoke) through app.inject, on every
// backend (PostgreSQL and MariaDB refuse what SQLite stores, such as NUL): whatever arrives, the answer is
// never a 5xx. 2,000 requests for the pages and 2,000 for OAuth, per backend and run (8,000 of each on the
// four backends), from a new seed each run (test/helpers/fuzz.ts: FUZZ_SEED replays one, FUZZ_SCALE runs more).
import { describe, it } from 'node:test';
import assert from 'node:assert/strict';
import fc from 'fast-check';
import type { LightMyRequestResponse } from 'fastify';
import { DIALECTS } from '../helpers/dialects.ts';
import { build, type Harness } from '../helpers/app.ts';
import { InjectBrowser, csrfOf } from '../helpers/inject-browser.ts';
import { pkcePair, registerClient, type TestClient } from '../helpers/oauth.ts';
import { fuzzRuns, fuzzSeed } from '../helpers/fuzz.ts';
import { nowSeconds } from '../../src/auth/clock.ts';

const SEED = fuzzSeed();

function assertNo5xx(r: LightMyRequestResponse, what: string): void {
  assert.ok(r.statusCode < 500, `${what}: ${r.statusCode} ${r.body.slice(0, 300)}`);
}

/** Strings of every kind: ASCII, any code point, NUL and control characters, lone surrogates, long runs. */
const anyString = fc.oneof(
  fc.string({ maxLength: 30 }),
  fc.string({ unit: 'binary', maxLength: 30 }),
  fc.string({ unit: 'grapheme', maxLength: 15 }),
  fc.constantFrom(
    '\0',
    'a\0b',
    '/\u0100',
    '/😀',
    '//evil',
    '/\\evil',
    '%00',
    '\ud800',
    '',
    ' ',
    '-1',
    '0',
    'yes',
  ),
  fc.string({ minLength: 500, maxLength: 2000 }),
);

/** A field that is absent, one value, or repeated. */
const field = fc.oneof(
  { weight: 2, arbitrary: fc.constant(undefined) },
  { weight: 6, arbitrary: anyString },
  { weight: 1, arbitrary: fc.array(anyString, { minLength: 2, maxLength: 3 }) },
);

function formBody(fields: Record<string, string | string[] | undefined>): string {
  const body = new URLSearchParams();
  for (const [name, value] of Object.entries(fields))
    if (value !== undefined) for (const v of Array.isArray(value) ? value : [value]) body.append(name, v);
  return body.toString();
}

const contentType = fc.constantFrom(
  'application/x-www-form-urlencoded',
  'application/x-www-form-urlencoded; charset=utf-8',
  'application/json',
  'text/plain',
  'multipart/form-data; boundary=x',
);

/** A signed-in browser whose sudo mode has lapsed (so no random form can sign it out everywhere). */
async function signedIn(h: Harness) {
  const user = await h.createUser();
  const browser = new InjectBrowser(h.app);
  await browser.signIn(user);
  await h.store.db
    .updateTable('tokens')
    .set({ password_at: nowSeconds() - 86_400 })
    .where('session', '=', 1)
    .execute();
  const csrf = csrfOf((await browser.get('/tokens')).body);
  return { user, browser, csrf };
}

const PAGE_ROUTES = [
  ['GET', '/login'],
  ['POST', '/login'],
  ['POST', '/logout'],
  ['GET', '/tokens'],
  ['POST', '/tokens'],
  ['GET', '/tokens/ID/revoke'],
  ['POST', '/tokens/ID/revoke'],
  ['GET', '/tokens/ID/regenerate'],
  ['POST', '/tokens/ID/regenerate'],
  ['GET', '/tokens/applications/ID/revoke'],
  ['POST', '/tokens/applications/ID/revoke'],
  ['GET', '/tokens/sign-out-everywhere'],
  ['POST', '/tokens/sign-out-everywhere'],
  ['GET', '/applications'],
  ['GET', '/applications/new'],
  ['POST', '/applications/new'],
  ['GET', '/applications/ID'],
  ['POST', '/applications/ID'],
  ['GET', '/applications/ID/secret'],
  ['POST', '/applications/ID/secret'],
  ['GET', '/applications/ID/delete'],
  ['POST', '/applications/ID/delete'],
] as const;

const OAUTH_ROUTES = [
  ['GET', '/oauth/authorize'],
  ['POST', '/oauth/authorize'],
  ['POST', '/oauth/token'],
  ['POST', '/oauth/introspect'],
  ['POST', '/oauth/revoke'],
] as const;

for (const dialect of DIALECTS) {
  const runs = fuzzRuns(2000);
  describe(`fuzzing the web pages and OAuth [${dialect}]`, () => {
    it(`web pages (${runs} requests): never a 5xx`, { timeout: 600_000 }, async (t) => {
      const h = await build(t, dialect, {
        LOGIN_RATE_LIMIT: '1000000000',
        LOGIN_IP_RATE_LIMIT: '1000000000',
      });
      const { user, browser, csrf } = await signedIn(h);
      const own = await h.createToken((await h.createUser()).id);
      const application = await registerClient(h, { ownerId: user.id });
      await fc.assert(
        fc.asyncProperty(
          fc.constantFrom(...PAGE_ROUTES),
          fc.record({
            id: fc.oneof(anyString, fc.constant(String(own.id)), fc.constant(application.id)),
            query: fc.record({
              next: field,
              p: field,
              revoked: field,
              disconnected: field,
              sort: field,
              created: field,
              signed_out: field,
              deleted: field,
              saved: field,
            }),
            form: fc.record({
              _csrf: fc.oneof({ weight: 4, arbitrary: fc.constant(csrf) }, { weight: 1, arbitrary: field }),
              username: field,
              password: field,
              next: field,
              description: field,
              privileges: field,
              expires_in: field,
              expires_on: field,
              confirm: field,
              confirm_password: field,
              name: field,
              redirect_uris: field,
              avatar: field,
              type: field,
              end_tokens: field,
            }),
            type: contentType,
            signedIn: fc.boolean(),
          }),
          async ([method, route], input) => {
            const path = route.replace('ID', encodeURIComponent(input.id.toWellFormed()));
            const query = formBody(input.query);
            const url = `${path}${query ? `?${query}` : ''}`;
            const options = {
              method,
              url,
              headers: { 'content-type': input.type },
              payload: method === 'POST' ? formBody(input.form) : undefined,
            } as const;
            const r = input.signedIn
              ? await browser.request(options)
              : await h.app.inject({ ...options, cookies: { _csrf: browser.cookies.get('_csrf') ?? '' } });
            assertNo5xx(r, `${method} ${url}`);
            // The browser must stay signed in for the next runs: sign in again if a form signed it out.
            if (!browser.cookies.has('rt')) {
              const fresh = await signedIn(h);
              for (const [k, v] of fresh.browser.cookies) browser.cookies.set(k, v);
            }
          },
        ),
        { numRuns: runs, seed: SEED },
      );
    });

    it(`OAuth endpoints (${runs} requests): never a 5xx`, { timeout: 600_000 }, async (t) => {
      const h = await build(t, dialect);
      const { user, browser } = await signedIn(h);
      const client: TestClient = await registerClient(h, { ownerId: user.id });
      const { challenge } = pkcePair();
      const known = {
        client_id: client.id,
        redirect_uri: client.redirectUri,
        response_type: 'code',
        code_challenge: challenge,
        code_challenge_method: 'S256',
      };
      const oauthField = (name: keyof typeof known) =>
        fc.oneof({ weight: 3, arbitrary: fc.constant(known[name]) }, { weight: 2, arbitrary: field });
      await fc.assert(
        fc.asyncProperty(
          fc.constantFrom(...OAUTH_ROUTES),
          fc.record({
            params: fc.record({
              client_id: oauthField('client_id'),
              redirect_uri: oauthField('redirect_uri'),
              response_type: oauthField('response_type'),
              code_challenge: oauthField('code_challenge'),
              code_challenge_method: oauthField('code_challenge_method'),
              scope: fc.oneof(field, fc.constantFrom('read_confidential', 'write bancho', 'nope')),
              state: field,
              decision: fc.oneof(field, fc.constantFrom('allow', 'deny')),
              confirm_password: field,
              grant_type: fc.oneof(field, fc.constantFrom('authorization_code', 'refresh_token')),
              code: field,
              code_verifier: field,
              refresh_token: field,
              token: field,
              token_type_hint: field,
              client_secret: fc.oneof(field, fc.constant(client.secret ?? '')),
            }),
            basic: fc.option(fc.tuple(anyString, anyString)),
            type: contentType,
            signedIn: fc.boolean(),
          }),
          async ([method, path], input) => {
            const encoded = formBody(input.params);
            const headers: Record<string, string> = { 'content-type': input.type };
            if (input.basic)
              headers.authorization = `Basic ${Buffer.from(`${encodeURIComponent(input.basic[0].toWellFormed())}:${encodeURIComponent(input.basic[1].toWellFormed())}`).toString('base64')}`;
            const options =
              method === 'GET'
                ? { method, url: `${path}?${encoded}`, headers }
                : { method, url: path, headers, payload: encoded };
            const r = input.signedIn ? await browser.request(options) : await h.app.inject(options);
            assertNo5xx(r, `${method} ${path} ${encoded.slice(0, 200)}`);
          },
        ),
        { numRuns: runs, seed: SEED },
      );
    });
  });
}
