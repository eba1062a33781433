// The words for a database that cannot be reached: DATABASE_URL without its password, and the cause of
// a failed connection with its fix (the CLI tests see them end to end, against real servers).
import { describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { connectionFailure, redactDatabaseUrl } from '../../src/store/open-errors.ts';
import { DatabaseTimeoutError } from '../../src/store/errors.ts';

const withCode = (message: string, code: string): Error => Object.assign(new Error(message), { code });

describe('redactDatabaseUrl()', () => {
  it('replaces the password, wherever the URL carries one, and keeps the rest', () => {
    for (const [url, shown] of [
      ['postgres://tokend:s3cret@db:5432/tokend', 'postgres://tokend:***@db:5432/tokend'],
      ['mysql://root:p%40ss@127.0.0.1/test', 'mysql://root:***@127.0.0.1/test'],
      ['postgres://db/tokend?user=u&password=s3cret', 'postgres://db/tokend?user=u&password=***'],
      ['postgres://tokend@db/tokend', 'postgres://tokend@db/tokend'],
      ['mysql://root@127.0.0.1:3306/test', 'mysql://root@127.0.0.1:3306/test'],
    ])
      assert.equal(redactDatabaseUrl(url!), shown);
  });

  it('redacts a URL that does not parse as well', () => {
    const shown = redactDatabaseUrl('postgres://tokend:s3cret@[bad/tokend');
    assert.ok(!shown.includes('s3cret'), shown);
    assert.match(shown, /tokend:\*\*\*@/);
  });
});

describe('connectionFailure()', () => {
  const url = 'postgres://tokend:pw@db.example:5433/tokend';
  it('names the cause and the fix of each way a connection fails', () => {
    const cases: Array<[unknown, RegExp]> = [
      [
        withCode('connect ECONNREFUSED', 'ECONNREFUSED'),
        /^connection refused by db\.example:5433: is the database server running/,
      ],
      [
        new AggregateError([withCode('a', 'ECONNREFUSED'), withCode('b', 'ECONNREFUSED')], ''),
        /^connection refused/,
      ],
      [withCode('getaddrinfo ENOTFOUND', 'ENOTFOUND'), /host name of db\.example:5433 does not resolve/],
      [
        withCode('database "tokend" does not exist', '3D000'),
        /^the server has no database "tokend": create it/,
      ],
      [withCode("Unknown database 'tokend'", 'ER_BAD_DB_ERROR'), /^the server has no database "tokend"/],
      [
        withCode('password authentication failed for user "tokend"', '28P01'),
        /^authentication failed for user "tokend" \(password/,
      ],
      [withCode('role "tokend" does not exist', '28000'), /^authentication failed for user "tokend"/],
      [withCode("Access denied for user 'tokend'", 'ER_ACCESS_DENIED_ERROR'), /^authentication failed/],
      [
        new DatabaseTimeoutError('connection'),
        /^no connection to db\.example:5433 within DB_TIMEOUT_MS \(1500 ms\)/,
      ],
      [new Error('timeout exceeded when trying to connect'), /within DB_TIMEOUT_MS \(1500 ms\)/],
    ];
    for (const [err, expected] of cases) {
      const said = connectionFailure(err, url, 1500);
      assert.match(said ?? '(nothing)', expected);
      assert.ok(!said?.includes('\n'), 'one line');
    }
  });

  it("says when the port is another kind of server's default, and when what answered speaks another protocol", () => {
    const atPostgres = connectionFailure(
      new DatabaseTimeoutError('connection'),
      'mysql://root@h:5432/db',
      2000,
    );
    assert.match(atPostgres ?? '', /port 5432 is PostgreSQL's default port: .* MySQL\/MariaDB's is 3306\)$/);
    const atMysql = connectionFailure(
      new Error('Received unexpected copyData message from backend.'),
      'postgres://postgres@h:3306/db',
      2000,
    );
    assert.match(
      atMysql ?? '',
      /^h:3306 answered, but not in PostgreSQL's protocol .* PostgreSQL's is 5432\)$/,
    );
    // Its own default port, or one of no known server: no hint.
    const own = connectionFailure(new DatabaseTimeoutError('connection'), 'mysql://root@h:3306/db', 2000);
    assert.ok(own !== undefined && !own.includes('default port'), own);
    assert.ok(
      !connectionFailure(new DatabaseTimeoutError('connection'), url, 2000)?.includes('default port'),
    );
  });

  it('leaves failures that are no failure to connect to be reported as they are', () => {
    assert.equal(connectionFailure(withCode('syntax error', '42601'), url, 1500), undefined);
    assert.equal(connectionFailure(new DatabaseTimeoutError('query'), url, 1500), undefined);
    assert.equal(connectionFailure(new Error('something else'), url, 1500), undefined);
  });
});
