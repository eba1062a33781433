// The WWW-Authenticate value of RFC 6750 §3 (src/http/bearer-challenge.ts).
import { describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { bearerChallenge } from '../../src/http/bearer-challenge.ts';

describe('bearerChallenge', () => {
  it('names the realm and the error, then the scope when one would do, then the description', () => {
    assert.equal(
      bearerChallenge({ error: 'insufficient_scope', scope: 'read_confidential', description: 'Needs it.' }),
      'Bearer realm="tokend", error="insufficient_scope", scope="read_confidential", error_description="Needs it."',
    );
    assert.equal(
      bearerChallenge({ error: 'invalid_token', description: 'Gone.' }),
      'Bearer realm="tokend", error="invalid_token", error_description="Gone."',
    );
  });

  it('never lets a quote or backslash end a value early (RFC 6750 allows neither in one)', () => {
    const value = bearerChallenge({ error: 'invalid_token', description: 'a "quoted" \\ word' });
    assert.equal(
      value,
      'Bearer realm="tokend", error="invalid_token", error_description="a \'quoted\' \' word"',
    );
    assert.equal(value.split('"').length - 1, 6);
  });
});
