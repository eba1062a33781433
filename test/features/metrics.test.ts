// GET /metrics: Prometheus text whose figures move with what the service does.
import { describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { DIALECTS } from '../helpers/dialects.ts';
import { build, body, WITH_METRICS, type Harness } from '../helpers/app.ts';
import { loadConfig, ConfigError } from '../../src/config.ts';
import { TokenPrivilege, UserPrivilege } from '../../src/auth/privileges.ts';

/** The value of one sample, or undefined when the series does not exist. */
function sample(text: string, name: string, labels: Record<string, string> = {}): number | undefined {
  for (const line of text.split('\n')) {
    if (line.startsWith('#') || line === '') continue;
    const m = /^([a-zA-Z_:][a-zA-Z0-9_:]*)(?:\{(.*)\})? (\S+)$/.exec(line);
    if (!m || m[1] !== name) continue;
    const have = Object.fromEntries(
      [...(m[2] ?? '').matchAll(/([a-zA-Z_][a-zA-Z0-9_]*)="((?:[^"\\]|\\.)*)"/g)].map((x) => [x[1], x[2]]),
    );
    if (Object.entries(labels).every(([k, v]) => have[k] === v)) return Number(m[3]);
  }
  return undefined;
}

/** GET /metrics with the harness's METRICS_TOKEN; the text, after checking the status and type. */
async function scrape(h: Harness): Promise<string> {
  const r = await h.app.inject({
    url: '/metrics',
    headers: { authorization: `Bearer ${h.config.metricsToken}` },
  });
  assert.equal(r.statusCode, 200, r.body);
  assert.match(String(r.headers['content-type']), /^text\/plain; version=0\.0\.4/);
  return r.body;
}

const ADMIN =
  UserPrivilege.UserPublic |
  UserPrivilege.UserNormal |
  UserPrivilege.AdminAccessRAP |
  UserPrivilege.AdminManageUsers |
  UserPrivilege.AdminBanUsers |
  UserPrivilege.AdminManageServer;

for (const dialect of DIALECTS) {
  describe(`metrics [${dialect}]`, () => {
    it('reports the longest event-loop hold since the last scrape', async (t) => {
      const h = await build(t, dialect, WITH_METRICS);
      await scrape(h);
      // Hold the loop for ~60 ms, then let the 10 ms sampler see it.
      const until = performance.now() + 60;
      while (performance.now() < until);
      await new Promise((resolve) => setTimeout(resolve, 30));
      const held = sample(await scrape(h), 'tokend_event_loop_delay_max_seconds');
      assert.ok(held !== undefined && held >= 0.04, `held ${held}`);
      await new Promise((resolve) => setTimeout(resolve, 30));
      const after = sample(await scrape(h), 'tokend_event_loop_delay_max_seconds');
      assert.ok(after !== undefined && after < held, `reset after a scrape: ${after} < ${held}`);
    });

    it('counts requests and latencies by route pattern and code, never by raw URL', async (t) => {
      const h = await build(t, dialect, WITH_METRICS);
      for (let i = 0; i < 3; i++)
        assert.equal((await h.api({ method: 'GET', path: '/ping' })).statusCode, 200);
      assert.equal((await h.api({ method: 'DELETE', path: '/tokens/987654' })).statusCode, 401);
      assert.equal((await h.app.inject({ url: '/api/no/such/thing/424242' })).statusCode, 404);
      // A GET route's HEAD twin and the routes of the API reference are counted too, each once.
      assert.equal((await h.app.inject({ method: 'HEAD', url: '/api/v1/ping' })).statusCode, 200);
      assert.equal((await h.app.inject({ url: '/api/v1/openapi.json' })).statusCode, 200);
      const text = await scrape(h);
      assert.equal(sample(text, 'tokend_http_requests_total', { method: 'HEAD', route: '/api/v1/ping' }), 1);
      assert.equal(sample(text, 'tokend_http_requests_total', { route: '/api/v1/openapi.json' }), 1);
      const ping = { method: 'GET', route: '/api/v1/ping', code: '200' };
      assert.equal(sample(text, 'tokend_http_requests_total', ping), 3);
      assert.equal(sample(text, 'tokend_http_request_duration_seconds_count', ping), 3);
      assert.ok((sample(text, 'tokend_http_request_duration_seconds_sum', ping) ?? -1) >= 0);
      assert.equal(
        sample(text, 'tokend_http_requests_total', {
          method: 'DELETE',
          route: '/api/v1/tokens/:id',
          code: '401',
        }),
        1,
      );
      assert.equal(sample(text, 'tokend_http_requests_total', { route: '(unmatched)', code: '404' }), 1);
      assert.doesNotMatch(text, /987654|424242/);
      // The scrape itself shows up in the next one.
      const again = await scrape(h);
      assert.equal(sample(again, 'tokend_http_requests_total', { route: '/metrics', code: '200' }), 1);
    });

    it('counts login attempts by outcome and tokens created', async (t) => {
      const h = await build(t, dialect, { LOGIN_RATE_LIMIT: '3', ...WITH_METRICS });
      const before = await scrape(h);
      for (const outcome of ['ok', '403', '418', '402', '429', '404'])
        assert.equal(sample(before, 'tokend_login_attempts_total', { outcome }), 0, outcome);
      const create = (payload: object) => h.api({ method: 'POST', path: '/tokens', payload });
      const ok = await h.createUser();
      const legacy = await h.createUser({ passwordVersion: 1 });
      const banned = await h.createUser({ privileges: 0 });
      const hammered = await h.createUser();
      assert.equal((await create({ id: ok.id, password: ok.password })).statusCode, 200);
      assert.equal((await create({ id: legacy.id, password: legacy.password })).statusCode, 418);
      assert.equal((await create({ id: banned.id, password: banned.password })).statusCode, 402);
      assert.equal((await create({ username: 'nobody-at-all', password: 'x' })).statusCode, 404);
      const codes = [];
      for (let i = 0; i < 4; i++)
        codes.push((await create({ id: hammered.id, password: 'wrong' })).statusCode);
      assert.deepEqual(codes, [403, 403, 403, 429]);
      // Missing fields never reach the login: not an attempt.
      assert.equal((await create({ id: ok.id })).statusCode, 422);
      const text = await scrape(h);
      const count = (outcome: string) => sample(text, 'tokend_login_attempts_total', { outcome });
      assert.deepEqual(['ok', '403', '418', '402', '429', '404'].map(count), [1, 3, 1, 1, 1, 1]);
      assert.equal(sample(text, 'tokend_tokens_created_total', { via: 'api' }), 1);
    });

    it('reports fix_privileges runs and rows rewritten', async (t) => {
      const h = await build(t, dialect, WITH_METRICS);
      const admin = await h.createUser({ privileges: ADMIN });
      const adminToken = await h.createToken(admin.id, {
        privileges: TokenPrivilege.ManageUser | TokenPrivilege.APIMeta,
      });
      const victim = await h.createUser();
      await h.createToken(victim.id, { privileges: TokenPrivilege.Write });
      await h.createToken(victim.id, { privileges: TokenPrivilege.ReadConfidential });
      await h.setUserPrivileges(victim.id, UserPrivilege.UserPublic); // loses UserNormal
      const r = await h.api({
        method: 'POST',
        path: `/tokens/fix_privileges?id=${victim.id}`,
        headers: { 'x-ripple-token': adminToken.secret },
      });
      assert.equal(r.statusCode, 200, r.body);
      await h.app.tokend.jobs.idle();
      const text = await scrape(h);
      assert.equal(sample(text, 'tokend_fix_privileges_runs_total'), 1);
      assert.equal(sample(text, 'tokend_fix_privileges_rows_rewritten_total'), 2);
    });

    it('reports last_updated batch sizes', async (t) => {
      const h = await build(t, dialect, WITH_METRICS);
      const user = await h.createUser();
      const a = await h.createToken(user.id);
      const b = await h.createToken(user.id);
      await h.app.tokend.lastUsed.flush();
      const before = await scrape(h);
      const sumBefore = sample(before, 'tokend_last_used_batch_size_sum') ?? 0;
      for (const token of [a, b])
        assert.equal(
          (await h.api({ method: 'GET', path: '/ping', headers: { 'x-ripple-token': token.secret } }))
            .statusCode,
          200,
        );
      await h.app.tokend.lastUsed.flush();
      const text = await scrape(h);
      assert.equal((sample(text, 'tokend_last_used_batch_size_sum') ?? 0) - sumBefore, 2);
      assert.ok((sample(text, 'tokend_last_used_batch_size_count') ?? 0) >= 1);
    });

    it('reports the database pool where the driver exposes it', async (t) => {
      const h = await build(t, dialect, WITH_METRICS);
      const user = await h.createUser();
      const token = await h.createToken(user.id);
      const self = await h.api({
        method: 'GET',
        path: '/tokens/self',
        headers: { 'x-ripple-token': token.secret },
      });
      assert.equal(self.statusCode, 200, self.body);
      const text = await scrape(h);
      const state = (s: string, pool = 'main') =>
        sample(text, 'tokend_db_pool_connections', { pool, state: s });
      if (dialect === 'postgres') {
        assert.equal(state('max'), 10);
        assert.ok((state('total') ?? 0) >= 1, text);
        assert.equal((state('total') ?? 0) - (state('idle') ?? 0), state('in_use'));
        assert.equal(state('waiting'), 0);
        // The credential lookup of the request above went through a pool of its own.
        assert.equal(state('max', 'lookup'), 4);
        assert.ok((state('total', 'lookup') ?? 0) >= 1, text);
        assert.equal(state('waiting', 'lookup'), 0);
      } else {
        assert.equal(state('total'), undefined, `${dialect} does not expose its pool`);
      }
    });
  });
}

describe('metrics are never public', () => {
  const secret = 'metrics-secret-0123456789';
  it('without METRICS_TOKEN, /metrics is off: a 404 envelope saying how to turn it on, no figures', async (t) => {
    const h = await build(t, 'sqlite');
    const user = await h.createUser();
    // Something worth hiding happened: a login.
    const login = await h.api({ method: 'POST', path: '/tokens', payload: { id: user.id, password: 'x' } });
    assert.equal(login.statusCode, 403);
    for (const headers of [{}, { authorization: `Bearer ${secret}` }, { authorization: 'Bearer ' }]) {
      const r = await h.app.inject({ url: '/metrics', headers });
      assert.equal(r.statusCode, 404, r.body);
      assert.equal(body(r).code, 404);
      assert.match(String(body(r).message), /off.*METRICS_TOKEN.*Authorization: Bearer/);
      assert.doesNotMatch(r.body, /tokend_|login/);
    }
  });

  it('with METRICS_TOKEN: 401 without the bearer secret or with another, 200 with it', async (t) => {
    const h = await build(t, 'sqlite', { METRICS_TOKEN: secret });
    const none = await h.app.inject({ url: '/metrics' });
    assert.equal(none.statusCode, 401);
    assert.equal(body(none).code, 401);
    assert.match(String(body(none).message), /METRICS_TOKEN/);
    assert.match(String(none.headers['www-authenticate']), /^Bearer/);
    for (const authorization of [
      `Bearer ${secret}x`,
      `Bearer ${secret.slice(0, -1)}`,
      `Basic ${secret}`,
      secret,
    ]) {
      const wrong = await h.app.inject({ url: '/metrics', headers: { authorization } });
      assert.equal(wrong.statusCode, 401, authorization);
      assert.doesNotMatch(wrong.body, /tokend_/);
    }
    const text = await scrape(h);
    assert.ok(sample(text, 'tokend_login_attempts_total', { outcome: 'ok' }) === 0);
  });

  it('refuses a short or spaced secret at start-up, naming the variable', () => {
    assert.throws(
      () => loadConfig({ METRICS_TOKEN: 'short' }),
      (e: unknown) => {
        return e instanceof ConfigError && e.variable === 'METRICS_TOKEN';
      },
    );
    assert.throws(() => loadConfig({ METRICS_TOKEN: 'has a space in it somewhere' }), ConfigError);
    assert.equal(loadConfig({}).metricsToken, undefined);
  });
});
