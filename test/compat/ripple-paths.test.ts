// The Ripple family's paths: a token id is digits, so any other segment after /tokens/ is the 404 with
// X-Real-404 (never a 405 naming DELETE); every 405's Allow lists exactly the methods of its path; doubled
// slashes are one slash, for the API, its credentials in the query and the pages; and RIPPLE_TIME_FORMAT
// (unix by default, rfc3339 for hanayo's /dev/tokens page) decides how last_updated is written.
import { describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import type { RouteOptions } from 'fastify';
import { DIALECTS } from '../helpers/dialects.ts';
import { build, body, sharedHarness, type Harness } from '../helpers/app.ts';
import { runCli } from '../helpers/cli.ts';
import { http, startTokend } from '../helpers/real-server.ts';
import { nowSeconds } from '../../src/auth/clock.ts';

const BIN = join(import.meta.dirname, '..', '..', 'bin', 'tokend.js');
const WRITE_AND_READ = 2 | 4;
const as = (secret: string) => ({ 'x-ripple-token': secret });

/**
 * Every path of the API under /api/v1 and the methods it has (HEAD with each GET), as a client sees
 * them: what each 405's Allow must say. A route added under /api/v1 must be added here
 * (the test below compares this table with the routes the app declares).
 */
const API_PATHS: Record<string, string> = {
  '/tokens': 'GET, HEAD, POST',
  '/tokens/new': 'POST',
  '/token/new': 'POST',
  '/tokens/self': 'DELETE, GET, HEAD',
  '/tokens/self/delete': 'POST',
  '/tokens/fix_privileges': 'POST',
  '/tokens/:id': 'DELETE',
  '/tokens/:id/delete': 'POST',
  '/ping': 'GET, HEAD',
  '/openapi.json': 'GET, HEAD',
};
const METHODS = ['GET', 'HEAD', 'POST', 'PUT', 'DELETE', 'PATCH', 'OPTIONS'] as const;

/** A route's URL as the table writes it: under /api/v1, its parameters without their patterns. */
const tablePath = (url: string) => url.slice('/api/v1'.length).replace(/(:\w+)\([^/]*\)/g, '$1');

for (const dialect of DIALECTS) {
  describe(`the Ripple family's paths [${dialect}]`, () => {
    const harness = sharedHarness(dialect);

    it('a segment after /tokens/ that is not digits is no path: the 404 with X-Real-404, whatever the method', async () => {
      const h = harness();
      const user = await h.createUser();
      const token = await h.createToken(user.id, { privileges: WRITE_AND_READ });
      // (`NEW` or `Self`, a path in other letters, is redirected to it where that method has it:
      // ripple-differences.test.ts)
      for (const segment of [
        'nope',
        'neww',
        'selfish',
        '12a',
        'a12',
        '-1',
        '1.0',
        '0x1f',
        'fix-privileges',
        '%20',
      ])
        for (const path of [`/tokens/${segment}`, `/tokens/${segment}/delete`])
          for (const method of METHODS)
            for (const headers of [{}, as(token.secret)]) {
              const what = `${method} ${path} ${Object.keys(headers).length ? 'with' : 'without'} a token`;
              const r = await h.api({ method, path, headers });
              assert.equal(r.statusCode, 404, `${what}: ${r.body}`);
              assert.equal(r.headers['x-real-404'], 'yes', what);
              assert.equal(r.headers.allow, undefined, what);
              if (method !== 'HEAD')
                assert.deepEqual(body(r), { code: 404, message: 'No such endpoint.' }, what);
            }
      // The token is untouched, and digits still name it: GET is a 405 naming DELETE, DELETE revokes.
      const get = await h.api({ method: 'GET', path: `/tokens/${token.id}` });
      assert.deepEqual([get.statusCode, get.headers.allow], [405, 'DELETE']);
      const other = await h.createToken(user.id);
      const revoked = await h.api({
        method: 'DELETE',
        path: `/tokens/${other.id}`,
        headers: as(token.secret),
      });
      assert.equal(revoked.statusCode, 200, revoked.body);
      const self = await h.api({ method: 'GET', path: '/tokens/self', headers: as(other.secret) });
      assert.equal(self.statusCode, 404);
    });

    it('every 405 lists in Allow exactly the methods its path has', async () => {
      const h = harness();
      for (const [path, allow] of Object.entries(API_PATHS)) {
        const concrete = path.replace(':id', '12');
        const has = allow.split(', ');
        for (const method of METHODS.filter((m) => !has.includes(m))) {
          const what = `${method} ${concrete}`;
          const r = await h.api({ method, path: concrete });
          assert.equal(r.statusCode, 405, `${what}: ${r.body}`);
          assert.equal(r.headers.allow, allow, what);
          assert.equal(r.headers['x-real-404'], undefined, what);
          if (method !== 'HEAD') assert.equal(body(r).code, 405, what);
          // A trailing slash, doubled slashes and a query string change nothing.
          for (const variant of [
            `${concrete}/`,
            `/${concrete.replaceAll('/', '//')}`,
            `${concrete}?id=1&x=//`,
          ]) {
            const again = await h.api({ method, path: variant });
            assert.deepEqual([again.statusCode, again.headers.allow], [405, allow], `${method} ${variant}`);
          }
        }
      }
    });

    it('doubled slashes are one slash: routes, query credentials, 404s and 405s', async () => {
      const h = harness();
      const user = await h.createUser();
      const token = await h.createToken(user.id, { privileges: WRITE_AND_READ, description: 'doubled' });
      const get = (url: string, headers: Record<string, string> = {}) =>
        h.app.inject({ method: 'GET', url, headers });
      for (const url of [
        '//api/v1/tokens/self',
        '/api/v1//tokens/self',
        '/api//v1///tokens//self//',
        `//api/v1/tokens/self?token=${token.secret}`,
        `/api/v1//tokens/self?k=${token.secret}&x=a//b`,
      ]) {
        const r = await get(url, url.includes('?') ? {} : as(token.secret));
        assert.equal(r.statusCode, 200, `${url}: ${r.body}`);
        assert.deepEqual([body(r).id, body(r).description], [token.id, 'doubled'], url);
      }
      const list = await get('/api/v1//tokens', as(token.secret));
      assert.equal(list.statusCode, 200, list.body);
      assert.ok((body(list).tokens as Array<{ id: number }>).some((t) => t.id === token.id));
      // Writes too: a token made, then revoked, through doubled slashes.
      const created = await h.app.inject({
        method: 'POST',
        url: '//api/v1//tokens',
        payload: { username: user.username, password: user.password, privileges: 2 },
      });
      assert.equal(created.statusCode, 200, created.body);
      const secret = String(body(created).token);
      const made = await get('/api/v1/tokens/self', as(secret));
      const id = Number(body(made).id);
      const revoked = await h.app.inject({
        method: 'POST',
        url: `/api/v1//tokens//${id}//delete`,
        headers: as(token.secret),
      });
      assert.equal(revoked.statusCode, 200, revoked.body);
      assert.equal((await get('/api/v1/tokens/self', as(secret))).statusCode, 404);
      // Unknown paths and wrong methods answer as with single slashes.
      const unknown = await get('//api/v1//nope');
      assert.deepEqual([unknown.statusCode, unknown.headers['x-real-404']], [404, 'yes']);
      const nonInteger = await get('//api/v1//tokens//nope');
      assert.deepEqual([nonInteger.statusCode, nonInteger.headers['x-real-404']], [404, 'yes']);
      const wrong = await get('//api//v1/tokens/new');
      assert.deepEqual([wrong.statusCode, wrong.headers.allow], [405, 'POST']);
    });

    it('doubled slashes on the pages: the page is found, and no redirect leads off the server', async () => {
      const h = harness();
      const html = { accept: 'text/html' };
      const tokens = await h.app.inject({ method: 'GET', url: '//tokens', headers: html });
      assert.equal(tokens.statusCode, 303);
      assert.equal(tokens.headers.location, '/login?next=%2Ftokens');
      const login = await h.app.inject({ method: 'GET', url: '//login', headers: html });
      assert.equal(login.statusCode, 200);
      assert.match(login.body, /<form/);
      // Attack: a path that would read as another host once its slashes were taken as given.
      for (const url of ['//evil.example/tokens', '//evil.example', '///evil.example//login']) {
        const r = await h.app.inject({ method: 'GET', url, headers: html });
        assert.notEqual(r.statusCode, 200, url);
        assert.doesNotMatch(String(r.headers.location ?? ''), /^\/\/|evil\.example/, url);
      }
      // A `next` of two slashes in the query is still refused after signing in.
      const next = await h.app.inject({ method: 'GET', url: '/login?next=//evil.example', headers: html });
      assert.doesNotMatch(next.body, /evil\.example/);
    });
  });

  describe(`last_updated by RIPPLE_TIME_FORMAT [${dialect}]`, () => {
    /** The caller's tokens and the token itself, as the API lists and shows them. */
    async function answers(h: Harness, secret: string) {
      const list = await h.api({ method: 'GET', path: '/tokens', headers: as(secret) });
      assert.equal(list.statusCode, 200, list.body);
      const self = await h.api({ method: 'GET', path: '/tokens/self', headers: as(secret) });
      assert.equal(self.statusCode, 200, self.body);
      return {
        listed: (body(list).tokens as Array<{ last_updated: unknown }>).map((t) => t.last_updated),
        self: body(self).last_updated,
      };
    }

    it('is Unix seconds by default and with RIPPLE_TIME_FORMAT=unix, as the spec has it', async (t) => {
      for (const env of [{}, { RIPPLE_TIME_FORMAT: 'unix' }] as Array<Record<string, string>>) {
        const h = await build(t, dialect, env);
        const user = await h.createUser();
        const before = nowSeconds();
        const token = await h.createToken(user.id, { privileges: WRITE_AND_READ });
        const { listed, self } = await answers(h, token.secret);
        assert.equal(listed.length, 1);
        for (const value of [...listed, self]) {
          assert.equal(typeof value, 'number', JSON.stringify(env));
          assert.ok(Number(value) >= before - 1 && Number(value) <= nowSeconds() + 1, String(value));
        }
      }
    });

    it('is an RFC 3339 string in UTC with RIPPLE_TIME_FORMAT=rfc3339, in every answer that carries it', async (t) => {
      // The app's clock at 2026-11-26T05:01:00Z: the time of every use it records.
      const h = await build(t, dialect, { RIPPLE_TIME_FORMAT: 'rfc3339' }, { clock: () => 1_795_669_260 });
      const user = await h.createUser();
      const reader = await h.createToken(user.id, { privileges: WRITE_AND_READ });
      const token = await h.createToken(user.id, { privileges: WRITE_AND_READ });
      // A known time, stored as the seconds it always is.
      await h.store.db
        .updateTable('tokens')
        .set({ last_updated: 1_795_669_200 })
        .where('id', '=', token.id)
        .execute();
      // Listed by another token: the stored time; shown to the token itself: the time of this use.
      const listedBy = async (secret: string) => {
        const list = await h.api({ method: 'GET', path: '/tokens', headers: as(secret) });
        assert.equal(list.statusCode, 200, list.body);
        return (body(list).tokens as Array<{ id: number; last_updated: unknown }>).find(
          (t) => t.id === token.id,
        )?.last_updated;
      };
      assert.equal(await listedBy(reader.secret), '2026-11-26T05:00:00Z');
      const self = await h.api({ method: 'GET', path: '/tokens/self', headers: as(token.secret) });
      assert.equal(body(self).last_updated, '2026-11-26T05:01:00Z');
      // Then listed with that use (pending, or written: the same answer).
      assert.equal(await listedBy(reader.secret), '2026-11-26T05:01:00Z');
      // JSONP and pls200 carry the same form.
      const jsonp = await h.app.inject({
        method: 'GET',
        url: `/api/v1/tokens?callback=cb&token=${token.secret}`,
      });
      assert.match(jsonp.body, /"last_updated":"\d{4}-\d\d-\d\dT\d\d:\d\d:\d\dZ"/);
    });
  });
}

describe('the API paths table', () => {
  it('names every path the app declares under /api/v1, with its methods', async (t) => {
    const routes: RouteOptions[] = [];
    await build(t, 'sqlite', {}, { onRoute: (route) => void routes.push(route) });
    const declared = new Map<string, Set<string>>();
    for (const route of routes.filter((r) => r.url.startsWith('/api/v1/'))) {
      const methods = declared.get(tablePath(route.url)) ?? new Set<string>();
      for (const method of [route.method].flat()) methods.add(method);
      declared.set(tablePath(route.url), methods);
    }
    assert.deepEqual(
      Object.fromEntries([...declared].map(([path, methods]) => [path, [...methods].sort().join(', ')])),
      API_PATHS,
    );
  });
});

describe('RIPPLE_TIME_FORMAT at start-up', () => {
  it('a bad value stops tokend serve with one line saying what it takes; nothing is opened', async (t) => {
    const dir = mkdtempSync(join(tmpdir(), 'tokend-time-format-'));
    t.after(() => rmSync(dir, { recursive: true, force: true }));
    const r = await runCli(['serve'], {
      env: { DATABASE_URL: `sqlite:${join(dir, 'tokend.db')}`, RIPPLE_TIME_FORMAT: 'iso' },
      entry: BIN,
    });
    assert.equal(r.code, 1);
    assert.equal(
      r.stderr.trim(),
      'tokend: invalid configuration: RIPPLE_TIME_FORMAT: expected unix (Unix seconds, the default) or ' +
        'rfc3339 (like 2026-11-26T05:00:00Z); got "iso"',
    );
  });

  it('doubled slashes and rfc3339 over a real socket, as a proxy passes them on', async (t) => {
    const dir = mkdtempSync(join(tmpdir(), 'tokend-slashes-'));
    t.after(() => rmSync(dir, { recursive: true, force: true }));
    const env = { DATABASE_URL: `sqlite:${join(dir, 'tokend.db')}`, RIPPLE_TIME_FORMAT: 'rfc3339' };
    const created = await runCli(['user', 'create', '--username', 'sock', '--password', 'pw', '--json'], {
      env,
      entry: BIN,
    });
    assert.equal(created.code, 0, created.stderr);
    const server = await startTokend(env, [BIN, 'serve']);
    t.after(() => server.stop());
    const login = await http({
      port: server.port,
      method: 'POST',
      path: '//api/v1//tokens',
      body: JSON.stringify({ username: 'sock', password: 'pw', privileges: 2 }),
    });
    assert.equal(login.status, 200, login.body);
    const secret = (JSON.parse(login.body) as { token: string }).token;
    const self = await http({ port: server.port, path: `//api/v1/tokens/self?token=${secret}` });
    assert.equal(self.status, 200, self.body);
    assert.match(
      (JSON.parse(self.body) as { last_updated: string }).last_updated,
      /^\d{4}-\d\d-\d\dT\d\d:\d\d:\d\dZ$/,
    );
  });
});
