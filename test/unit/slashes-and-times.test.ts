// Pure functions of the Ripple family's forms: a request's path as the family reads it, doubled slashes
// collapsed and dot segments resolved (src/http/slashes.ts), and last_updated as RFC 3339
// (src/tokens/time-format.ts).
import { describe, it } from 'node:test';
import assert from 'node:assert/strict';
import fc from 'fast-check';
import { collapseSlashes, normalizeTarget, removeDotSegments } from '../../src/http/slashes.ts';
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

describe('removeDotSegments and normalizeTarget', () => {
  it('resolve `.` and `..` as RFC 3986 does, never above the root, and leave the query as it is', () => {
    const cases: Array<[string, string]> = [
      ['/api/v1/tokens/./self', '/api/v1/tokens/self'],
      ['/api/v1/tokens/../ping', '/api/v1/ping'],
      ['/api/v1/tokens/.', '/api/v1/tokens/'],
      ['/api/v1/tokens/..', '/api/v1/'],
      ['/../../api/v1/ping', '/api/v1/ping'],
      ['/..', '/'],
      ['/api/v1/tokens/.hidden/..x/...', '/api/v1/tokens/.hidden/..x/...'],
      ['/api/v1/tokens/%2e/self', '/api/v1/tokens/%2e/self'],
    ];
    for (const [path, expected] of cases) assert.equal(removeDotSegments(path), expected, path);
    assert.equal(normalizeTarget('/api/v1//tokens/./self?next=/./x//y'), '/api/v1/tokens/self?next=/./x//y');
    assert.equal(normalizeTarget('/api/v1/tokens?x=/../'), '/api/v1/tokens?x=/../');
    assert.equal(normalizeTarget('*'), '*');
  });

  it("agree with the WHATWG URL parser's path for any path of segments, dots and slashes", () => {
    const segment = fc.constantFrom('a', 'b', '.', '..', '...', '.a', '');
    fc.assert(
      fc.property(fc.array(segment, { minLength: 1, maxLength: 8 }), (segments) => {
        const path = `/${segments.join('/')}`;
        const expected = new URL(collapseSlashes(path), 'http://tokend.invalid').pathname;
        return normalizeTarget(path) === expected;
      }),
      { numRuns: 2000 },
    );
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
