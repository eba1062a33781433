// The environment variables that look like tokend's and are not: which are named at start, with what
// they most likely meant; and the names tokend knows, which must be every name config.ts reads.
import { describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { describeUnknownVariable, knownVariables, unknownVariables } from '../../src/unknown-variables.ts';
import { nearestName } from '../../src/nearest-name.ts';
import { configVariablesInSource } from '../helpers/config-source.ts';

const found = (env: Record<string, string>) =>
  Object.fromEntries(unknownVariables(env).map((u) => [u.name, describeUnknownVariable(u)]));

describe('knownVariables', () => {
  it('is every variable config.ts reads (a variable read only under a condition would be missed)', () => {
    const known = knownVariables();
    assert.ok(known.includes('DATABASE_URL') && known.includes('PORT'), known.join(' '));
    assert.deepEqual(known, configVariablesInSource());
  });
});

describe('unknownVariables', () => {
  it('names a near miss of a known name with the name it missed', () => {
    const warnings = found({
      DATABSE_URL: 'sqlite:x.db',
      LOG_LEVL: 'debug',
      WORKER: '2',
      BCRYPT_CSOT: '12',
      PROT: '8081', // two edits from PORT: a 4-letter name allows one
      PORTS: '8081',
    });
    assert.deepEqual(Object.keys(warnings).sort(), [
      'BCRYPT_CSOT',
      'DATABSE_URL',
      'LOG_LEVL',
      'PORTS',
      'WORKER',
    ]);
    assert.equal(
      warnings.DATABSE_URL,
      "the environment variable DATABSE_URL is not one of tokend's and is ignored; did you mean DATABASE_URL?",
    );
    assert.match(warnings.LOG_LEVL ?? '', /did you mean LOG_LEVEL\?$/);
    assert.match(warnings.WORKER ?? '', /did you mean WORKERS\?$/);
    assert.match(warnings.BCRYPT_CSOT ?? '', /did you mean BCRYPT_COST\?$/);
    assert.match(warnings.PORTS ?? '', /did you mean PORT\?$/);
  });

  it('names a known name written with the same words in another form (plural, past tense, abbreviation)', () => {
    const warnings = found({
      DB_URL: 'postgres://db/tokend',
      TRUSTED_PROXIES: '1',
      trusted_proxy: '1',
      DATABASE_POOL_SIZE: '20',
      TOKEN_PER_USERS_MAX: '5',
    });
    assert.equal(
      warnings.DB_URL,
      "the environment variable DB_URL is not one of tokend's and is ignored; did you mean DATABASE_URL?",
    );
    assert.match(warnings.TRUSTED_PROXIES ?? '', /did you mean TRUST_PROXY\?$/);
    assert.match(warnings.trusted_proxy ?? '', /did you mean TRUST_PROXY\?$/);
    assert.match(warnings.DATABASE_POOL_SIZE ?? '', /did you mean DB_POOL_SIZE\?$/);
    assert.match(warnings.TOKEN_PER_USERS_MAX ?? '', /did you mean TOKENS_PER_USER_MAX\?$/);
  });

  it('names a known name written in another case', () => {
    assert.match(found({ port: '8081' }).port ?? '', /did you mean PORT\?$/);
    assert.match(found({ Database_Url: 'x' }).Database_Url ?? '', /did you mean DATABASE_URL\?$/);
  });

  it("names a variable that begins with the first word of tokend's names, with those names", () => {
    const warnings = found({ REDIS_HOST: 'cache', LOGIN_LIMIT: '10', DB_PASSWORD: 'x' });
    assert.match(warnings.REDIS_HOST ?? '', /tokend's REDIS_ variables are REDIS_KEY_PREFIX and REDIS_URL$/);
    assert.match(warnings.DB_PASSWORD ?? '', /tokend's DB_ variables are DB_POOL_SIZE and DB_TIMEOUT_MS$/);
    assert.match(
      warnings.LOGIN_LIMIT ?? '',
      /LOGIN_IP_RATE_LIMIT, LOGIN_RATE_LIMIT and LOGIN_RATE_WINDOW_S$/,
    );
  });

  it('leaves alone the variables of a shell, npm, systemd and Node, and every known name', () => {
    const env: Record<string, string> = {
      HOME: '/root',
      HOSTNAME: 'box',
      HOSTTYPE: 'x86_64',
      PATH: '/usr/bin',
      PWD: '/',
      OLDPWD: '/',
      LOGNAME: 'root',
      USER: 'root',
      SHELL: '/bin/bash',
      TERM: 'xterm',
      LANG: 'C.UTF-8',
      NODE: '/usr/bin/node',
      NODE_ENV: 'production',
      NODE_OPTIONS: '',
      NODE_COMPILE_CACHE: '/var/cache/tokend',
      NO_COLOR: '1',
      COLOR: '0',
      INIT_CWD: '/',
      EDITOR: 'vi',
      npm_config_cache: '/root/.npm',
      npm_lifecycle_event: 'start',
      npm_package_name: 'tokend',
      INVOCATION_ID: 'x',
      JOURNAL_STREAM: '8:1',
      CI: 'true',
      _: '/usr/bin/node',
      TESTS: '1', // "test" is two edits from "host" once stemmed: plain forms count only when equal
      TMPDIR: '/tmp',
      TZ: 'UTC',
      LC_ALL: 'C',
      XDG_RUNTIME_DIR: '/run/user/0',
      SSH_CONNECTION: 'x',
      HTTP_PROXY: 'http://proxy',
      NO_PROXY: 'localhost',
      DEBUGINFOD_URLS: 'x',
      SUDO_USER: 'admin', // sudo's, beside SUDO_WINDOW_S
      SUDO_UID: '1000',
      SUDO_GID: '1000',
      SUDO_COMMAND: '/usr/bin/tokend serve',
      PGHOST: 'db', // PostgreSQL's client's, which pg reads itself: not HOST or PORT misspelt
      PGPORT: '5432',
      PGPASSWORD: 'x',
    };
    for (const name of knownVariables()) env[name] = '';
    assert.deepEqual(unknownVariables(env), []);
  });
});

describe('nearestName', () => {
  it('is the name fewest edits away within the limit, letter case ignored; none beyond it', () => {
    assert.equal(nearestName('sreve', ['serve', 'user'], 2), 'serve');
    assert.equal(nearestName('SERVE', ['serve'], 0), 'serve');
    assert.equal(nearestName('lst', ['list', 'ls'], 2), 'list', 'the first on a tie');
    assert.equal(nearestName('frobnicate', ['serve', 'user'], 2), undefined);
    assert.equal(nearestName('x', [], 5), undefined);
  });

  it('is a name of the same words once stemmed and abbreviations spelt out, whatever the edits', () => {
    assert.equal(nearestName('TRUSTED_PROXIES', ['PORT', 'TRUST_PROXY'], 2), 'TRUST_PROXY');
    assert.equal(nearestName('db-url', ['database-url', 'db-pool-size'], 0), 'database-url');
    assert.equal(nearestName('TRUSTED_HOSTS', ['TRUST_PROXY'], 2), undefined, 'other words are not near');
    assert.equal(nearestName('TESTS', ['HOST'], 2), undefined, 'stems a few edits apart are not near');
  });
});
