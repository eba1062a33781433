// loadConfig(): defaults, and a ConfigError naming the variable for every bad value.
import { describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { ConfigError, loadConfig, parseDatabaseUrl } from '../../src/config.ts';

function refuses(env: Record<string, string>, variable: string) {
  assert.throws(
    () => loadConfig(env),
    (err: unknown) => {
      assert.ok(err instanceof ConfigError, `${JSON.stringify(env)} threw ${String(err)}`);
      assert.equal(err.variable, variable);
      assert.ok(err.message.includes(variable), err.message);
      assert.ok(!err.message.includes('\n'), 'one line');
      return true;
    },
    JSON.stringify(env),
  );
}

describe('loadConfig()', () => {
  it('has the documented defaults', () => {
    const c = loadConfig({});
    assert.deepEqual(c.database, { kind: 'sqlite', path: 'data/tokend.db' });
    assert.equal(c.host, '127.0.0.1');
    assert.equal(c.port, 8080);
    assert.equal(c.basePath, '/api');
    assert.equal(c.trustProxy, false);
    assert.equal(c.loginRateLimit, 5);
    assert.equal(c.loginRateWindowS, 60);
    assert.equal(c.redisUrl, undefined);
    assert.deepEqual(c.oauthGrants, { perClient: 10, perUser: 100 });
    assert.deepEqual(c.oauthTokenRate, { perClient: 10, perUser: 30, windowS: 60 });
    assert.equal(c.logLevel, 'info');
    assert.equal(c.accessLog, true);
  });

  it('reads RIPPLE_TIME_FORMAT: unix by default and when empty, rfc3339 in any letter case', () => {
    assert.equal(loadConfig({}).rippleTimeFormat, 'unix');
    assert.equal(loadConfig({ RIPPLE_TIME_FORMAT: '' }).rippleTimeFormat, 'unix');
    assert.equal(loadConfig({ RIPPLE_TIME_FORMAT: 'unix' }).rippleTimeFormat, 'unix');
    assert.equal(loadConfig({ RIPPLE_TIME_FORMAT: ' RFC3339 ' }).rippleTimeFormat, 'rfc3339');
    assert.throws(
      () => loadConfig({ RIPPLE_TIME_FORMAT: 'iso8601' }),
      /RIPPLE_TIME_FORMAT: expected unix \(Unix seconds, the default\) or rfc3339 .*; got "iso8601"/,
    );
  });

  it('turns the access line off with ACCESS_LOG=off, in any letter case; on and empty keep it', () => {
    assert.equal(loadConfig({ ACCESS_LOG: 'off' }).accessLog, false);
    assert.equal(loadConfig({ ACCESS_LOG: ' OFF ' }).accessLog, false);
    assert.equal(loadConfig({ ACCESS_LOG: 'on' }).accessLog, true);
    assert.equal(loadConfig({ ACCESS_LOG: '' }).accessLog, true);
  });

  it('reads the OAuth bounds and token-endpoint limits, and names a bad one', () => {
    const c = loadConfig({
      OAUTH_GRANTS_PER_CLIENT_MAX: '3',
      OAUTH_GRANTS_PER_USER_MAX: '7',
      OAUTH_TOKEN_RATE_LIMIT: '4',
      OAUTH_TOKEN_USER_RATE_LIMIT: '9',
      OAUTH_TOKEN_RATE_WINDOW_S: '120',
    });
    assert.deepEqual(c.oauthGrants, { perClient: 3, perUser: 7 });
    assert.deepEqual(c.oauthTokenRate, { perClient: 4, perUser: 9, windowS: 120 });
    for (const name of [
      'OAUTH_GRANTS_PER_CLIENT_MAX',
      'OAUTH_GRANTS_PER_USER_MAX',
      'OAUTH_TOKEN_RATE_LIMIT',
      'OAUTH_TOKEN_USER_RATE_LIMIT',
      'OAUTH_TOKEN_RATE_WINDOW_S',
    ])
      assert.throws(
        () => loadConfig({ [name]: '0' }),
        (err: unknown) => err instanceof ConfigError && err.variable === name,
      );
  });

  it('reads good values', () => {
    const c = loadConfig({
      PORT: '9000',
      HOST: '0.0.0.0',
      BASE_PATH: '/x/api',
      LOGIN_RATE_LIMIT: '10',
      LOGIN_RATE_WINDOW_S: '30',
      TRUST_PROXY: '1',
      DATABASE_URL: 'postgres://u@localhost/db',
      REDIS_URL: 'redis://127.0.0.1:6379',
      LOG_LEVEL: 'WARN',
    });
    assert.equal(c.port, 9000);
    assert.equal(c.host, '0.0.0.0');
    assert.equal(c.basePath, '/x/api');
    assert.equal(c.loginRateLimit, 10);
    assert.equal(c.loginRateWindowS, 30);
    assert.equal(c.trustProxy, 1);
    assert.deepEqual(c.database, { kind: 'postgres', url: 'postgres://u@localhost/db' });
    assert.equal(c.redisUrl, 'redis://127.0.0.1:6379');
    assert.equal(c.logLevel, 'warn');
  });

  it('TRUST_PROXY: false, a hop count, or a list of addresses', () => {
    for (const off of ['', 'false', '0', 'no'])
      assert.equal(loadConfig({ TRUST_PROXY: off }).trustProxy, false, off);
    assert.equal(loadConfig({ TRUST_PROXY: '2' }).trustProxy, 2);
    assert.deepEqual(loadConfig({ TRUST_PROXY: '10.0.0.1, 192.168.0.0/16' }).trustProxy, [
      '10.0.0.1',
      '192.168.0.0/16',
    ]);
    assert.deepEqual(loadConfig({ TRUST_PROXY: 'loopback' }).trustProxy, ['loopback']);
    assert.deepEqual(loadConfig({ TRUST_PROXY: 'fd00::/8,::1, uniquelocal' }).trustProxy, [
      'fd00::/8',
      '::1',
      'uniquelocal',
    ]);
    assert.equal(loadConfig({ TRUST_PROXY: '16' }).trustProxy, 16);
    assert.equal(loadConfig({ TRUST_PROXY: '1' }).http.maxConnectionsPerIp, 0);
    assert.throws(
      () => loadConfig({ TRUST_PROXY: 'true' }),
      (err: Error) =>
        /^TRUST_PROXY: .*any client choose its address.*number of proxies.*loopback.*CIDRs/.test(err.message),
    );
  });

  it('TRUST_PROXY: a hop count of 0, however written, is no proxy, and keeps the per-address connection cap', () => {
    const noProxy = loadConfig({});
    for (const zero of ['0', '00', '000', ' 0 ']) {
      const c = loadConfig({ TRUST_PROXY: zero });
      assert.equal(c.trustProxy, false, zero);
      assert.equal(c.http.maxConnectionsPerIp, noProxy.http.maxConnectionsPerIp, zero);
      assert.ok(c.http.maxConnectionsPerIp > 0, zero);
    }
  });

  it('TRUST_PROXY: ranges up to the widest private one of each family (/8, /7), none of IPv4-mapped IPv6', () => {
    for (const list of [
      '10.0.0.0/8',
      '100.64.0.0/10',
      '1.0.0.0/8',
      'fc00::/7',
      'fe80::/10',
      '2001:db8::/32',
      '::1',
      '::1/127',
      '::/96',
      '64:ff9b::/96',
    ])
      assert.deepEqual(loadConfig({ TRUST_PROXY: list }).trustProxy, [list], list);
    const refusals: Array<[string, RegExp]> = [
      ['0.0.0.0/1,128.0.0.0/1', /"0\.0\.0\.0\/1" is wider than any proxies' range.*IPv4: \/8 or longer/],
      ['10.0.0.1, 128.0.0.0/1', /"128\.0\.0\.0\/1" is wider/],
      ['10.0.0.0/7', /"10\.0\.0\.0\/7" is wider.*IPv4: \/8 or longer, as in 10\.0\.0\.0\/8/],
      ['::/6', /"::\/6" is wider.*IPv6: \/7 or longer, as in fd00::\/8 or uniquelocal/],
      ['2000::/3', /"2000::\/3" is wider/],
      ['::ffff:0:0/96', /"::ffff:0:0\/96" is IPv4-mapped IPv6 for 0\.0\.0\.0\/0, wider than any/],
      ['::ffff:0:0/97', /"::ffff:0:0\/97" is IPv4-mapped IPv6 for 0\.0\.0\.0\/1, wider than any/],
      ['::FFFF:0.0.0.0/97', /"::ffff:0\.0\.0\.0\/97" is IPv4-mapped IPv6 for 0\.0\.0\.0\/1/],
      ['::ffff:a00:0/104', /"::ffff:a00:0\/104" is IPv4-mapped IPv6.*: write 10\.0\.0\.0\/8 instead/],
      ['::ffff:10.0.0.1', /"::ffff:10\.0\.0\.1" is IPv4-mapped IPv6.*: write 10\.0\.0\.1 instead/],
      ['0:0:0:0:0:ffff:c0a8:1', /write 192\.168\.0\.1 instead/],
      ['::/80', /"::\/80" holds every IPv4-mapped IPv6 address \(::ffff:0:0\/96\)/],
      ['::ffff:1.2.3.4/64', /"::ffff:1\.2\.3\.4\/64" holds every IPv4-mapped/],
      ['::/7', /"::\/7" holds every IPv4-mapped/],
    ];
    for (const [list, problem] of refusals) {
      refuses({ TRUST_PROXY: list }, 'TRUST_PROXY');
      assert.throws(
        () => loadConfig({ TRUST_PROXY: list }),
        (err: Error) => problem.test(err.message) && /; expected false, a hop count/.test(err.message),
        list,
      );
    }
  });

  it('DATABASE_URL: every supported scheme', () => {
    assert.deepEqual(parseDatabaseUrl('sqlite:/tmp/x.db'), { kind: 'sqlite', path: '/tmp/x.db' });
    assert.deepEqual(parseDatabaseUrl('sqlite:data/y.db'), { kind: 'sqlite', path: 'data/y.db' });
    assert.equal(parseDatabaseUrl('postgresql://h/db').kind, 'postgres');
    assert.deepEqual(parseDatabaseUrl('mariadb://root@h/db'), { kind: 'mysql', url: 'mysql://root@h/db' });
    assert.equal(parseDatabaseUrl('mysql://root@h/db').kind, 'mysql');
  });

  it('DATABASE_URL: a bare file path is answered with the sqlite: form it likely means', () => {
    assert.throws(
      () => parseDatabaseUrl('data/other.db'),
      (err: Error) => err.message.includes('did you mean sqlite:data/other.db?'),
    );
    assert.throws(
      () => parseDatabaseUrl('mongodb://u:hunter2@h/db'),
      (err: Error) => err.message.includes('"mongodb"') && !err.message.includes('hunter2'),
    );
  });

  const bad: Array<[Record<string, string>, string]> = [
    [{ PORT: 'abc' }, 'PORT'],
    [{ PORT: '-1' }, 'PORT'],
    [{ PORT: '70000' }, 'PORT'],
    [{ PORT: '80.5' }, 'PORT'],
    [{ PORT: '8080abc' }, 'PORT'],
    [{ DATABASE_URL: 'redis://localhost' }, 'DATABASE_URL'],
    [{ DATABASE_URL: 'mongodb://localhost/db' }, 'DATABASE_URL'],
    [{ DATABASE_URL: 'data/tokend.db' }, 'DATABASE_URL'],
    [{ SIGNING_KEY_SECRET: '   ' }, 'SIGNING_KEY_SECRET'],
    [{ SERVER_NAME: 'Akatsuki\u0007' }, 'SERVER_NAME'],
    [{ SERVER_NAME: 'x'.repeat(65) }, 'SERVER_NAME'],
    [{ DATABASE_URL: 'sqlite:' }, 'DATABASE_URL'],
    [{ DATABASE_URL: '' }, 'DATABASE_URL'],
    [{ TRUST_PROXY: 'true' }, 'TRUST_PROXY'],
    [{ TRUST_PROXY: 'YES' }, 'TRUST_PROXY'],
    [{ TRUST_PROXY: 'maybe' }, 'TRUST_PROXY'],
    [{ TRUST_PROXY: 'yes please' }, 'TRUST_PROXY'],
    [{ TRUST_PROXY: '10.0.0.1, evil host' }, 'TRUST_PROXY'],
    [{ TRUST_PROXY: '17' }, 'TRUST_PROXY'],
    [{ TRUST_PROXY: '10.1' }, 'TRUST_PROXY'],
    [{ TRUST_PROXY: '10.0.0.256' }, 'TRUST_PROXY'],
    [{ TRUST_PROXY: '10.0.0.0/33' }, 'TRUST_PROXY'],
    [{ TRUST_PROXY: '10.0.0.0/8/8' }, 'TRUST_PROXY'],
    [{ TRUST_PROXY: '10.0.0.0/255.0.0.0' }, 'TRUST_PROXY'],
    [{ TRUST_PROXY: '::/0' }, 'TRUST_PROXY'],
    [{ TRUST_PROXY: '::1/129' }, 'TRUST_PROXY'],
    [{ TRUST_PROXY: '10.0.0.1,' }, 'TRUST_PROXY'],
    [{ TRUST_PROXY: '1, 10.0.0.1' }, 'TRUST_PROXY'],
    [{ LOGIN_RATE_LIMIT: '0' }, 'LOGIN_RATE_LIMIT'],
    [{ LOGIN_RATE_LIMIT: 'five' }, 'LOGIN_RATE_LIMIT'],
    [{ LOGIN_RATE_WINDOW_S: '0' }, 'LOGIN_RATE_WINDOW_S'],
    [{ LOGIN_RATE_WINDOW_S: '1m' }, 'LOGIN_RATE_WINDOW_S'],
    [{ BASE_PATH: 'api' }, 'BASE_PATH'],
    [{ BASE_PATH: '/api/' }, 'BASE_PATH'],
    [{ LOG_LEVEL: 'loud' }, 'LOG_LEVEL'],
    [{ ACCESS_LOG: 'no' }, 'ACCESS_LOG'],
    [{ ACCESS_LOG: 'false' }, 'ACCESS_LOG'],
    [{ RIPPLE_TIME_FORMAT: 'iso' }, 'RIPPLE_TIME_FORMAT'],
    [{ RIPPLE_TIME_FORMAT: 'rfc 3339' }, 'RIPPLE_TIME_FORMAT'],
    [{ REDIS_URL: 'http://localhost:6379' }, 'REDIS_URL'],
    [{ HOST: '  ' }, 'HOST'],
    [{ BCRYPT_COST: '3' }, 'BCRYPT_COST'],
  ];
  for (const [env, variable] of bad) {
    it(`${JSON.stringify(env)} is a ConfigError naming ${variable}`, () => refuses(env, variable));
  }

  it('a bad integer setting says the allowed range, whatever was wrong with it', () => {
    for (const value of ['-1', '70000', 'abc', '80.5', ' 1e3', '99999999999999999999'])
      assert.throws(
        () => loadConfig({ PORT: value }),
        { message: `PORT: expected an integer from 0 to 65535, got ${JSON.stringify(value)}` },
        value,
      );
    assert.throws(() => loadConfig({ DB_TIMEOUT_MS: '99' }), {
      message: 'DB_TIMEOUT_MS: expected an integer from 100 to 600000, got "99"',
    });
    assert.equal(loadConfig({ PORT: ' 8081 ' }).port, 8081, 'spaces around a number are fine');
  });

  it('names the variable even when other values are good', () => {
    refuses({ PORT: '8080', HOST: '::', DATABASE_URL: 'ftp://x' }, 'DATABASE_URL');
  });
});
