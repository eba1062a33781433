// bench/support.ts: the settings a benchmark's tokend runs with, and how a row names them.
import { describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { describeSettings, tokendEnv, tokendSettings } from '../../bench/support.ts';

describe("a benchmark's tokend settings", () => {
  it('are named in a row: none are the shipped defaults', () => {
    assert.equal(describeSettings(null), '—');
    assert.equal(describeSettings({}), 'shipped defaults');
    assert.equal(describeSettings({ LOG_LEVEL: 'warn', WORKERS: '2' }), 'LOG_LEVEL=warn, WORKERS=2');
  });

  it("are the bench's own tokend variables, then --log-level, then the scenario's", (t) => {
    const saved = { ...process.env };
    t.after(() => {
      for (const name of ['BCRYPT_COST', 'LOG_LEVEL', 'DATABASE_URL', 'PORT', 'MAX_REQUESTS_PER_SOCKET'])
        if (saved[name] === undefined) delete process.env[name];
        else process.env[name] = saved[name];
    });
    for (const name of ['BCRYPT_COST', 'LOG_LEVEL', 'DATABASE_URL', 'PORT', 'MAX_REQUESTS_PER_SOCKET'])
      delete process.env[name];
    assert.deepEqual(tokendSettings({ logLevel: undefined }), {});

    Object.assign(process.env, {
      BCRYPT_COST: '5',
      LOG_LEVEL: 'debug',
      DATABASE_URL: 'sqlite:elsewhere.db',
      PORT: '1',
      MAX_REQUESTS_PER_SOCKET: '7',
    });
    // What the bench sets itself (the database, the port, the keep-alive cap) is never named.
    assert.deepEqual(tokendSettings({ logLevel: undefined }), { BCRYPT_COST: '5', LOG_LEVEL: 'debug' });
    assert.deepEqual(tokendSettings({ logLevel: 'warn' }, { WORKERS: '2', BCRYPT_COST: '6' }), {
      BCRYPT_COST: '6',
      LOG_LEVEL: 'warn',
      WORKERS: '2',
    });
    assert.deepEqual(tokendEnv({ url: 'sqlite:bench.db' }, { MAX_REQUESTS_PER_SOCKET: '7', WORKERS: '2' }), {
      WORKERS: '2',
      DATABASE_URL: 'sqlite:bench.db',
      MAX_REQUESTS_PER_SOCKET: '0',
    });
    // The ripple backend's tokend serves its family database in place; the others never get the variable.
    const url = 'mysql://root@127.0.0.1:3306/family';
    assert.deepEqual(tokendEnv({ url, config: { kind: 'mysql', url, schema: 'ripple' } }, {}), {
      DATABASE_URL: url,
      DATABASE_SCHEMA: 'ripple',
      MAX_REQUESTS_PER_SOCKET: '0',
    });
    assert.deepEqual(tokendEnv({ url, config: { kind: 'mysql', url } }, {}), {
      DATABASE_URL: url,
      MAX_REQUESTS_PER_SOCKET: '0',
    });
  });
});
