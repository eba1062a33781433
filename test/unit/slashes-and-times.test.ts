// Two pure functions of the Ripple family's forms: collapsing doubled slashes in a request's path
// (src/http/slashes.ts) and writing last_updated as RFC 3339 (src/tokens/time-format.ts).
import { describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { collapseSlashes } from '../../src/http/slashes.ts';
import { presentTime } from '../../src/tokens/time-format.ts';

describe('collapseSlashes', () => {
  it('makes each run of slashes in the path one, and leaves the query as it is', () => {
    const cases: Array<[string, string]> = [
      ['//api/v1/tokens/self', '/api/v1/tokens/self'],
      ['/api/v1//tokens', '/api/v1/tokens'],
      ['///api////v1///tokens///', '/api/v1/tokens/'],
      ['//', '/'],
      ['/api/v1//tokens?token=a//b&next=//evil.example', '/api/v1/tokens?token=a//b&next=//evil.example'],
      ['/login?next=%2F%2Ftokens', '/login?next=%2F%2Ftokens'],
      ['/api/v1/tokens?x=1', '/api/v1/tokens?x=1'],
      ['/api/v1/tokens', '/api/v1/tokens'],
      // Not a path: left alone.
      ['*', '*'],
      ['http://host//api//v1', 'http://host//api//v1'],
      // An encoded slash is not a slash of the path.
      ['/api/v1/%2F/tokens', '/api/v1/%2F/tokens'],
    ];
    for (const [target, expected] of cases) assert.equal(collapseSlashes(target), expected, target);
  });
});

describe('presentTime', () => {
  it('keeps Unix seconds as they are, or writes RFC 3339 in UTC without fractions', () => {
    assert.equal(presentTime(1_795_669_200, 'unix'), 1_795_669_200);
    assert.equal(presentTime(1_795_669_200, 'rfc3339'), '2026-11-26T05:00:00Z');
    assert.equal(presentTime(0, 'rfc3339'), '1970-01-01T00:00:00Z');
    assert.equal(presentTime(2 ** 31 - 1, 'rfc3339'), '2038-01-19T03:14:07Z');
    for (const seconds of [1, 59, 86_399, 951_782_400, 1_600_000_004]) {
      const text = presentTime(seconds, 'rfc3339') as string;
      assert.match(text, /^\d{4}-\d\d-\d\dT\d\d:\d\d:\d\dZ$/);
      assert.equal(Date.parse(text) / 1000, seconds, text);
    }
  });
});
