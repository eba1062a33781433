// No secret reaches a log line. With logging at trace (everything debug shows, and more), the test drives
// every credential transport, token creation down each of its error paths, the OAuth endpoints, and the
// database-failure path, then searches every captured line for every secret it knows of: token secrets,
// their SHA-256, passwords, their MD5, bcrypt hashes, the client secret, access and refresh tokens.
import { describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { storedSecretHash } from '../../src/auth/secret.ts';
import { createHash, randomBytes } from 'node:crypto';
import type { InjectOptions } from 'fastify';
import { DIALECTS } from '../helpers/dialects.ts';
import { build, body } from '../helpers/app.ts';
import { loggerOptions } from '../../src/http/logging.ts';
import { md5Hex } from '../../src/users/passwords.ts';
import { issueTokenPair } from '../../src/oauth/issue.ts';
import { nowSeconds } from '../../src/auth/clock.ts';
import { form, FORM } from '../helpers/inject-browser.ts';
import { registerClient } from '../helpers/oauth.ts';
import { createTestDatabase } from '../helpers/databases.ts';
import { http, startTokend } from '../helpers/real-server.ts';
import { within } from '../helpers/waiting.ts';
import { seedUsers } from '../helpers/seed-users.ts';

const sha256 = (s: string) => createHash('sha256').update(s, 'utf8').digest('hex');
const distinctive = (label: string) => `${label}-${randomBytes(12).toString('hex')}`;

for (const dialect of DIALECTS) {
  describe(`secrets [${dialect}]`, () => {
    it('never reach a log line: every credential transport and error path, at log level trace', async (t) => {
      const lines: string[] = [];
      const logger = {
        ...(loggerOptions('trace') as Record<string, unknown>),
        stream: { write: (line: string) => void lines.push(line) },
      };
      const h = await build(t, dialect, { LOG_LEVEL: 'trace', LOGIN_RATE_LIMIT: '5' }, { logger });
      const secrets = new Map<string, string>(); // value → what it is
      const remember = (what: string, value: string) => secrets.set(value, what);

      const user = await h.createUser({ password: distinctive('password') });
      const limited = await h.createUser({ password: distinctive('password') });
      const legacy = await h.createUser({ password: distinctive('password'), passwordVersion: 1 });
      const banned = await h.createUser({ password: distinctive('password'), privileges: 0 });
      for (const u of [user, limited, legacy, banned]) {
        remember('password', u.password);
        remember('MD5 of a password', md5Hex(u.password));
      }
      for (const row of await h.store.db.selectFrom('users').select('password_hash').execute())
        remember('bcrypt hash', row.password_hash);

      const send = (options: InjectOptions & { path: string }) => h.api(options);
      const root = (options: InjectOptions) => h.app.inject(options);

      // --- token creation: success and each refusal, with the password in the body ---
      const created = await send({
        method: 'POST',
        path: '/tokens',
        payload: { id: user.id, password: user.password },
      });
      assert.equal(created.statusCode, 200, created.body);
      const secret = body(created).token as string;
      remember('token secret', secret);
      remember('token hash', sha256(secret));
      remember('token hash', storedSecretHash(h.store.layout, { private: false })(secret));
      const other = await h.createToken(user.id);
      remember('token secret', other.secret);
      const statuses: number[] = [];
      const creations: Array<InjectOptions & { path: string }> = [
        { method: 'POST', path: '/token/new', payload: { username: user.username, password: user.password } },
        { method: 'POST', path: '/tokens/new', payload: { id: user.id, password: 'wrong' + user.password } },
        { method: 'POST', path: '/tokens', payload: { username: 'nobody-here', password: user.password } },
        { method: 'POST', path: '/tokens', payload: { id: legacy.id, password: legacy.password } },
        { method: 'POST', path: '/tokens', payload: { id: banned.id, password: banned.password } },
        { method: 'POST', path: '/tokens', payload: { password: user.password } },
        { method: 'POST', path: '/tokens', payload: { id: String(user.id), password: user.password } },
        {
          method: 'POST',
          path: '/tokens',
          headers: { 'content-type': 'application/json' },
          payload: `{"id": ${user.id}, "password": "${user.password}", oops}`,
        },
        {
          method: 'POST',
          path: '/tokens',
          payload: { id: user.id, password: user.password, description: 'x'.repeat(h.config.bodyLimit) },
        },
        {
          method: 'POST',
          path: '/tokens',
          headers: { 'content-type': 'application/x-www-form-urlencoded' },
          payload: `id=${user.id}&password=${user.password}`,
        },
        { method: 'POST', path: `/tokens?password=${user.password}&callback=cb` },
      ];
      for (let i = 0; i < 7; i++)
        creations.push({
          method: 'POST',
          path: '/tokens',
          payload: { id: limited.id, password: limited.password },
        });
      for (const c of creations) statuses.push((await send(c)).statusCode);
      for (const expected of [200, 403, 404, 418, 402, 422, 400, 413, 429])
        assert.ok(statuses.includes(expected), `no ${expected} among ${statuses.join(',')}`);

      // --- every credential transport, on every token endpoint, identified and not ---
      const transports: Array<{
        headers?: Record<string, string>;
        query?: string;
        cookies?: Record<string, string>;
      }> = [
        { headers: { 'x-ripple-token': secret } },
        { headers: { authorization: `Bearer ${secret}` } },
        { query: `token=${secret}` },
        { query: `k=${secret}` },
        // The query parser decodes names: these are `token` and `k` too, and must be redacted as such.
        { query: `%74oken=${secret}` },
        { query: `tok%65n=${secret}` },
        { query: `%6B=${secret}` },
        { query: `%6b=${secret}&x=1` },
        { cookies: { rt: secret } },
        { cookies: { rt: secret }, query: 'callback=cb' },
        { query: `token=${secret}&pls200` },
      ];
      const endpoints = [
        ['GET', '/tokens'],
        ['GET', '/tokens/self'],
        ['GET', '/ping'],
        ['POST', '/tokens/fix_privileges'],
        ['GET', '/no/such/endpoint'],
      ] as const;
      for (const tr of transports)
        for (const [method, path] of endpoints) {
          const r = await send({
            method,
            path: `${path}?${tr.query ?? ''}`,
            headers: tr.headers,
            cookies: tr.cookies,
          });
          assert.ok(r.statusCode < 500, `${method} ${path}: ${r.body}`);
        }

      // --- OAuth: a confidential client, its bearer tokens, and the token, introspect and revoke endpoints ---
      const client = await registerClient(h, { ownerId: user.id });
      remember('client secret', client.secret!);
      const pair = await issueTokenPair(
        h.store.db,
        { clientId: client.id, userId: user.id, scope: 'read_confidential', family: distinctive('family') },
        nowSeconds(),
      );
      remember('access token', pair.access_token);
      remember('refresh token', pair.refresh_token!);
      for (const [method, path] of endpoints)
        await send({ method, path, headers: { authorization: `Bearer ${pair.access_token}` } });
      const basic = `Basic ${Buffer.from(`${client.id}:${client.secret}`).toString('base64')}`;
      const wrongBasic = `Basic ${Buffer.from(`${client.id}:${client.secret}x`).toString('base64')}`;
      const oauth: InjectOptions[] = [
        {
          method: 'POST',
          url: '/oauth/introspect',
          headers: { ...FORM, authorization: basic },
          payload: form({ token: pair.access_token }),
        },
        {
          method: 'POST',
          url: '/oauth/introspect',
          headers: { ...FORM, authorization: wrongBasic },
          payload: form({ token: pair.access_token }),
        },
        {
          method: 'POST',
          url: `/oauth/token?client_secret=${client.secret}`,
          headers: FORM,
          payload: form({
            grant_type: 'refresh_token',
            refresh_token: pair.refresh_token,
            client_id: client.id,
            client_secret: client.secret,
          }),
        },
        {
          method: 'POST',
          url: '/oauth/token',
          headers: { ...FORM, authorization: basic },
          payload: form({ grant_type: 'authorization_code', code: 'nope', code_verifier: 'x'.repeat(43) }),
        },
        {
          method: 'POST',
          url: '/oauth/revoke',
          headers: { ...FORM, authorization: basic },
          payload: form({ token: pair.refresh_token }),
        },
        {
          method: 'GET',
          url: `/oauth/authorize?client_id=${client.id}&response_type=code&code_challenge=x&client_secret=${client.secret}`,
        },
      ];
      for (const o of oauth) {
        const r = await root(o);
        assert.ok(r.statusCode < 500, `${o.url}: ${r.body}`);
      }

      // --- deleting the current token ---
      const deleted = await send({
        method: 'POST',
        path: '/tokens/self/delete',
        headers: { 'x-ripple-token': other.secret },
      });
      assert.equal(deleted.statusCode, 200);

      // --- the database goes away: 500s, with their error objects logged ---
      await h.store.close();
      const failures: Array<InjectOptions & { path: string }> = [
        { method: 'POST', path: '/tokens', payload: { id: user.id, password: user.password } },
        { method: 'GET', path: '/tokens/self', headers: { 'x-ripple-token': secret } },
        { method: 'GET', path: `/tokens?token=${secret}` },
        { method: 'GET', path: '/ping', headers: { authorization: `Bearer ${pair.access_token}` } },
      ];
      for (const f of failures) {
        const r = await send(f);
        assert.equal(r.statusCode, 500, `${f.path}: ${r.body}`);
      }
      const introspect500 = await root(oauth[0]!);
      assert.ok(introspect500.statusCode >= 500, introspect500.body);
      assert.equal((await root({ url: '/health/ready' })).statusCode, 503);

      // --- the search ---
      assert.ok(lines.length > 100, `only ${lines.length} log lines: is logging on?`);
      assert.equal(h.app.log.level, 'trace');
      assert.ok(
        lines.some((l) => /"level":50/.test(l) && l.includes('"err"')),
        'no error was logged',
      );
      assert.ok(
        lines.some((l) => l.includes('token=[REDACTED]')),
        'no redacted URL was logged',
      );
      const leaks: string[] = [];
      for (const line of lines) {
        const lower = line.toLowerCase();
        for (const [value, what] of secrets)
          if (lower.includes(value.toLowerCase())) leaks.push(`${what} in: ${line.slice(0, 400)}`);
      }
      assert.deepEqual(leaks, []);
    });

    it("stores only a hash of a token (SHA-256; in place the family's MD5 form) and finds tokens by it alone", async (t) => {
      const h = await build(t, dialect);
      const user = await h.createUser();
      const created = await h.api({
        method: 'POST',
        path: '/tokens',
        payload: { id: user.id, password: user.password },
      });
      const secret = body(created).token as string;
      assert.match(secret, /^[0-9a-f]{32}$/);
      // The form a public token is stored in: SHA-256, or in place the MD5 hex the family's API looks up.
      const stored = storedSecretHash(h.store.layout, { private: false });
      const rows = await h.store.db.selectFrom('tokens').selectAll().execute();
      assert.equal(rows.length, 1);
      assert.equal(rows[0]!.token_hash, stored(secret));
      assert.ok(!JSON.stringify(rows).includes(secret), 'the secret itself is stored');

      // The hash is the whole of the lookup: change it and the secret no longer authenticates;
      // store the hash of another value and that value does.
      const self = (value: string) =>
        h.api({ method: 'GET', path: '/tokens/self', headers: { 'x-ripple-token': value } });
      assert.equal((await self(secret)).statusCode, 200);
      const replacement = distinctive('replacement');
      await h.store.db
        .updateTable('tokens')
        .set({ token_hash: stored(replacement) })
        .execute();
      assert.equal((await self(secret)).statusCode, 404);
      assert.equal((await self(replacement)).statusCode, 200);
      // Prefixes, case changes and the hash itself are different credentials.
      for (const near of [replacement.slice(0, -1), replacement.toUpperCase(), stored(replacement)])
        assert.equal((await self(near)).statusCode, 404, near);
    });
  });
}

if (DIALECTS.includes('postgres'))
  describe('secrets in a real process', () => {
    it('LOG_LEVEL=debug: stdout and stderr never show the database password, passwords or tokens', async (t) => {
      const database = await createTestDatabase('postgres');
      t.after(() => database.drop());
      const [user] = await seedUsers(database.config, 1);
      // The test server trusts loopback, so any password is accepted; it must still never be printed.
      const dbPassword = distinctive('dbpassword');
      const url = new URL(database.url);
      url.password = dbPassword;
      const server = await startTokend({ DATABASE_URL: url.toString(), LOG_LEVEL: 'debug' });
      t.after(() => server.kill());
      const created = await http({
        port: server.port,
        method: 'POST',
        path: '/api/v1/tokens',
        body: JSON.stringify({ id: user!.id, password: user!.password }),
      });
      assert.equal(created.status, 200, created.body);
      const secret = (JSON.parse(created.body) as { token: string }).token;
      for (const path of [
        `/api/v1/tokens?token=${secret}`,
        `/api/v1/ping?k=${secret}`,
        '/api/v1/tokens/self',
      ])
        await http({
          port: server.port,
          path,
          headers: { authorization: `Bearer ${secret}`, cookie: `rt=${secret}` },
        });
      await http({
        port: server.port,
        method: 'POST',
        path: '/api/v1/tokens',
        body: `{"id": ${user!.id}, "password": "${user!.password}", broken`,
      });
      server.child.kill('SIGTERM');
      assert.deepEqual(await within(10_000, 'exit', server.exited), { code: 0, signal: null });
      const output = server.lines.join('\n') + server.stderr();
      assert.ok(server.lines.length >= 10, `only ${server.lines.length} lines on stdout`);
      assert.match(output, /"level":20|"level":30/);
      for (const [what, value] of [
        ['database password', dbPassword],
        ['user password', user!.password],
        ['MD5 of the password', md5Hex(user!.password)],
        ['token secret', secret],
        ['token hash', sha256(secret)],
      ])
        assert.ok(!output.toLowerCase().includes(value!.toLowerCase()), `${what} printed by the process`);
    });
  });
