// The OAuth parameter reader (src/oauth/params.ts): one value each (RFC 6749 §3.1), empty as omitted.
import { describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { singleParam, singleValued } from '../../src/oauth/params.ts';
import { InvalidRequest } from '../../src/oauth/errors.ts';

describe('singleValued() and singleParam()', () => {
  it('read one value each; an empty one counts as omitted', () => {
    assert.deepEqual(singleValued({ a: 'x', b: '' }), { a: 'x' });
    assert.equal(singleParam({ a: 'x', b: '' }, 'a'), 'x');
    assert.equal(singleParam({ b: '' }, 'b'), undefined);
    assert.equal(singleParam({}, 'a'), undefined);
    assert.equal(singleParam(undefined, 'a'), undefined);
    assert.equal(singleParam({}, 'constructor'), undefined, 'never an inherited property');
  });

  it('refuse a repeated or non-text value with invalid_request, naming it', () => {
    for (const read of [
      () => singleValued({ scope: ['a', 'b'] }),
      () => singleParam({ scope: ['a', 'b'] }, 'scope'),
    ])
      assert.throws(
        read,
        (err) => err instanceof InvalidRequest && /scope parameter was given more/.test(err.message),
      );
    assert.throws(() => singleParam({ scope: 5 }, 'scope'), /scope parameter must be a string/);
    assert.throws(() => singleValued({ scope: 5 }), /scope parameter must be a string/);
  });
});
