// Property-based fuzzing of tokend in place on a Ripple-family database of the family's own form (latin1
// database and tables), through app.inject: the API, the OAuth endpoints and the web pages, with names,
// client ids, descriptions and application names that latin1 cannot hold (Japanese, Greek, Cyrillic,
// emoji, controls, lone surrogates) mixed with ones it can (é, €) and the real ones. Whatever arrives, no
// answer is a 5xx; a token made is stored with its description exactly as sent; an application made is
// stored with its name as typed. 2,000 requests per surface, from a fixed seed (test/helpers/fuzz.ts:
// FUZZ_SEED sets another, FUZZ_SCALE runs more).
import { describe, it } from 'node:test';
import assert from 'node:assert/strict';
import fc from 'fast-check';
import type { LightMyRequestResponse } from 'fastify';
import type { RowDataPacket } from 'mysql2/promise';
import { DIALECTS } from '../helpers/dialects.ts';
import { build, type Harness, type TestUser } from '../helpers/app.ts';
import { InjectBrowser, csrfOf } from '../helpers/inject-browser.ts';
import { pkcePair, registerClient, obtainTokens } from '../helpers/oauth.ts';
import { fuzzRuns, fuzzSeed } from '../helpers/fuzz.ts';

const RUNS = fuzzRuns(2000);
const SEED = fuzzSeed(36_036);
const LIMITS = { LOGIN_RATE_LIMIT: '1000000000', LOGIN_IP_RATE_LIMIT: '1000000000' };

function assertNo5xx(r: LightMyRequestResponse, what: string): void {
  assert.ok(r.statusCode < 500, `${what}: ${r.statusCode} ${r.body.slice(0, 300)}`);
}

/** Characters latin1 cannot hold, by kind, and some it can that UTF-8 writes in two or three bytes. */
const beyondLatin1 = fc.constantFrom(
  'ア',
  'リ',
  'ス',
  '日',
  '本',
  'Ε',
  'λ',
  'Ж',
  'я',
  'Ā',
  'ő',
  '😀',
  '𝕏',
  '\u200b',
  '\u202e',
  '\ufffd',
  '\u0100',
);
const latin1Beyond7bit = fc.constantFrom('é', 'ü', 'ß', 'Ø', '€', '™', 'Ÿ', '\u00a0', '\u0081', '\u0090');
const asciiChar = fc.constantFrom(...'abcXYZ019 _-[]');

/** Text mixing the three: mostly short, sometimes long; now and then something else entirely. */
const text = fc.oneof(
  {
    weight: 6,
    arbitrary: fc
      .array(
        fc.oneof(
          { weight: 3, arbitrary: beyondLatin1 },
          { weight: 2, arbitrary: latin1Beyond7bit },
          { weight: 3, arbitrary: asciiChar },
        ),
        { maxLength: 20 },
      )
      .map((chars) => chars.join('')),
  },
  { weight: 1, arbitrary: fc.string({ unit: 'binary', maxLength: 20 }) },
  { weight: 1, arbitrary: fc.string({ unit: 'grapheme', maxLength: 10 }) },
  { weight: 1, arbitrary: fc.constantFrom('', '\0', 'a\0b', '\ud800', 'アリス', 'アプリ', '日本', 'Zoë') },
  { weight: 1, arbitrary: fc.array(beyondLatin1, { minLength: 250, maxLength: 300 }).map((a) => a.join('')) },
);

/** A name: a real one as typed, a real one in another spelling, or text. */
const nameOf = (users: readonly TestUser[]) =>
  fc.oneof(
    { weight: 2, arbitrary: fc.constantFrom(...users.map((u) => u.username)) },
    {
      weight: 1,
      arbitrary: fc
        .tuple(fc.constantFrom(...users.map((u) => u.username)), text)
        .map(([name, extra]) => `${name.toUpperCase()}${extra}`),
    },
    { weight: 4, arbitrary: text },
  );

function formBody(fields: Record<string, string | undefined>): string {
  const body = new URLSearchParams();
  for (const [name, value] of Object.entries(fields)) if (value !== undefined) body.append(name, value);
  return body.toString();
}

/** The users of a run: active ones with names the family's website makes, and a banned one. */
async function users(h: Harness): Promise<TestUser[]> {
  return [
    await h.createUser({ username: 'Alice' }),
    await h.createUser({ username: 'Zoë Ärger' }),
    await h.createUser({ username: 'bob_42' }),
    await h.createUser({ username: 'Banned One', privileges: 0 }),
  ];
}

const descriptionOf = async (h: Harness, id: number): Promise<string> =>
  (await h.family!.query<RowDataPacket[]>('SELECT description FROM tokens WHERE id = ?', [id]))[0][0]!
    .description as string;

if (DIALECTS.includes('ripple'))
  describe("fuzzing tokend in place on the family's latin1 database", () => {
    it(
      `the API (${RUNS} requests): never a 5xx; a token is stored with its description as sent`,
      { timeout: 600_000 },
      async (t) => {
        const h = await build(t, 'ripple', LIMITS);
        const people = await users(h);
        const { secret } = await h.createToken(people[0]!.id, { privileges: 2 | 4 });
        let made = 0;
        await fc.assert(
          fc.asyncProperty(
            fc.oneof(
              {
                weight: 5,
                arbitrary: fc.record(
                  {
                    username: nameOf(people),
                    id: fc.oneof(
                      fc.constantFrom(...people.map((u) => u.id)),
                      fc.integer({ min: -1, max: 10 ** 6 }),
                    ),
                    password: fc.oneof(fc.constantFrom(...people.map((u) => u.password)), text),
                    privileges: fc.constantFrom(0, 2, 4, 6, 8191),
                    description: text,
                  },
                  { requiredKeys: ['password'] },
                ),
              },
              {
                // an account's own name (or id) and password: what reaches the tokens table
                weight: 3,
                arbitrary: fc
                  .tuple(fc.constantFrom(...people), fc.boolean(), text)
                  .map(([user, byName, description]) =>
                    byName
                      ? { username: user.username, password: user.password, description }
                      : { id: user.id, password: user.password, description },
                  ),
              },
              { weight: 2, arbitrary: fc.tuple(fc.constantFrom('/tokens', '/tokens/self', '/ping'), text) },
            ),
            async (input) => {
              if (Array.isArray(input)) {
                const [path, value] = input;
                const query = new URLSearchParams({ id: value, p: value, callback: value }).toString();
                const r = await h.api({
                  method: 'GET',
                  path: `${path}?${query}`,
                  headers: { 'x-ripple-token': secret },
                });
                return assertNo5xx(r, `GET ${path}?${query}`);
              }
              const r = await h.api({ method: 'POST', path: '/tokens', payload: input });
              assertNo5xx(r, `POST /tokens ${JSON.stringify(input).slice(0, 200)}`);
              if (r.statusCode !== 200) return;
              made++;
              const token = r.json() as { token: string };
              const self = await h.api({
                method: 'GET',
                path: '/tokens/self',
                headers: { 'x-ripple-token': token.token },
              });
              const { id } = self.json() as { id: number };
              assert.equal(await descriptionOf(h, id), input.description ?? '');
            },
          ),
          { numRuns: RUNS, seed: SEED },
        );
        assert.ok(made > 50, `only ${made} tokens were made: the run hardly reached the table`);
        await h.app.tokend.jobs.idle();
      },
    );

    it(`OAuth (${RUNS} requests): never a 5xx for any client id`, { timeout: 600_000 }, async (t) => {
      const h = await build(t, 'ripple', LIMITS);
      const [owner, user] = await users(h);
      const client = await registerClient(h, { ownerId: owner!.id, name: 'アプリ' });
      const browser = new InjectBrowser(h.app);
      await browser.signIn(user!);
      const issued = await obtainTokens(h, browser, client);
      const { challenge } = pkcePair();
      const clientId = fc.oneof(
        { weight: 2, arbitrary: fc.constant(client.id) },
        { weight: 4, arbitrary: text },
        { weight: 1, arbitrary: text.map((extra) => `${client.id}${extra}`) },
      );
      const maybe = <T>(a: fc.Arbitrary<T>) => fc.option(a, { nil: undefined });
      await fc.assert(
        fc.asyncProperty(
          fc.constantFrom(
            ['GET', '/oauth/authorize'],
            ['POST', '/oauth/authorize'],
            ['POST', '/oauth/token'],
            ['POST', '/oauth/introspect'],
            ['POST', '/oauth/revoke'],
          ),
          fc.record({
            client_id: clientId,
            client_secret: maybe(fc.oneof(fc.constant(client.secret ?? ''), text)),
            redirect_uri: maybe(fc.oneof(fc.constant(client.redirectUri), text)),
            response_type: maybe(fc.constantFrom('code', 'token')),
            code_challenge: maybe(fc.constant(challenge)),
            code_challenge_method: maybe(fc.constant('S256')),
            scope: maybe(fc.oneof(fc.constantFrom('read_confidential', 'write'), text)),
            state: maybe(text),
            grant_type: maybe(fc.constantFrom('client_credentials', 'authorization_code', 'refresh_token')),
            code: maybe(text),
            refresh_token: maybe(fc.oneof(fc.constant(issued.refresh_token), text)),
            token: maybe(fc.oneof(fc.constant(issued.access_token), text)),
            decision: maybe(fc.constantFrom('allow', 'deny')),
          }),
          fc.option(fc.tuple(text, text)),
          fc.boolean(),
          async ([method, path], params, basic, signedIn) => {
            // Keep the grant the other runs use: no revocation of its tokens.
            if (path === '/oauth/revoke' && params.client_id === client.id) return;
            const encoded = formBody(params);
            const headers: Record<string, string> = { 'content-type': 'application/x-www-form-urlencoded' };
            if (basic)
              headers.authorization = `Basic ${Buffer.from(`${encodeURIComponent(basic[0].toWellFormed())}:${encodeURIComponent(basic[1].toWellFormed())}`).toString('base64')}`;
            const options =
              method === 'GET'
                ? { method, url: `${path}?${encoded}`, headers }
                : { method, url: path, headers, payload: encoded };
            const r = signedIn ? await browser.request(options) : await h.app.inject(options);
            assertNo5xx(r, `${method} ${path} ${encoded.slice(0, 200)}`);
          },
        ),
        { numRuns: RUNS, seed: SEED },
      );
    });

    it(
      `the pages (${RUNS} requests): never a 5xx; an application is stored with its name as typed`,
      { timeout: 600_000 },
      async (t) => {
        const h = await build(t, 'ripple', { ...LIMITS, OAUTH_CLIENTS_PER_USER_MAX: '100000' });
        const people = await users(h);
        const browser = new InjectBrowser(h.app);
        await browser.signIn(people[0]!);
        const csrf = csrfOf((await browser.get('/tokens')).body);
        let registered = 0;
        await fc.assert(
          fc.asyncProperty(
            fc.constantFrom(
              ['POST', '/login'],
              ['POST', '/tokens'],
              ['POST', '/applications/new'],
              ['GET', '/tokens'],
            ),
            fc.record({
              username: nameOf(people),
              password: fc.oneof(fc.constantFrom(...people.map((u) => u.password)), text),
              description: text,
              privileges: fc.constantFrom('Write', 'ReadConfidential', undefined),
              name: text,
              redirect_uris: fc.constantFrom(
                'https://app.example/callback',
                'https://ア.example/cb',
                'http://127.0.0.1/cb',
              ),
              type: fc.constantFrom('confidential', 'public'),
              sort: text,
            }),
            async ([method, path], input) => {
              const { sort, ...fields } = input;
              if (method === 'GET') {
                const r = await browser.get(`${path}?${new URLSearchParams({ sort })}`);
                return assertNo5xx(r, `GET ${path}`);
              }
              // a sign-in comes from a browser of its own (the CSRF cookie alone); the signed-in one makes
              // tokens and applications
              const r =
                path === '/login'
                  ? await h.app.inject({
                      method,
                      url: path,
                      headers: { 'content-type': 'application/x-www-form-urlencoded' },
                      cookies: { _csrf: browser.cookies.get('_csrf') ?? '' },
                      payload: formBody({ ...fields, _csrf: csrf }),
                    })
                  : await browser.post(path, { ...fields, _csrf: csrf });
              assertNo5xx(r, `${method} ${path} ${JSON.stringify(fields).slice(0, 200)}`);
              if (path === '/applications/new' && r.statusCode === 303) {
                registered++;
                const [rows] = await h.family!.query<RowDataPacket[]>(
                  'SELECT name FROM tokend_oauth_clients WHERE owner_id = ? ORDER BY created_at DESC, id DESC',
                  [people[0]!.id],
                );
                assert.ok(
                  rows.some((row) => row.name === fields.name.toWellFormed().trim().replace(/\s+/gu, ' ')),
                  `${JSON.stringify(fields.name)} not among the stored names`,
                );
              }
            },
          ),
          { numRuns: RUNS, seed: SEED },
        );
        assert.ok(registered > 20, `only ${registered} applications were registered`);
      },
    );
  });
