// src/auth/live.ts: the one rule of a live credential, as JavaScript predicates over rows already read.
import { describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { hasExpired, isLive } from '../../src/auth/live.ts';

describe('live credentials', () => {
  it('a credential expires at its expiry, not before; one without expiry never does', () => {
    assert.equal(hasExpired(100, 99), false);
    assert.equal(hasExpired(100, 100), true);
    assert.equal(hasExpired('100', 101), true);
    assert.equal(hasExpired(null, Number.MAX_SAFE_INTEGER), false);
  });
  it('a credential spent by its use is not live once used, whatever its expiry', () => {
    assert.equal(isLive({ expires_at: 100, used: 0 }, 99), true);
    assert.equal(isLive({ expires_at: 100, used: 1 }, 99), false);
    assert.equal(isLive({ expires_at: 100, used: '0' }, 100), false);
    assert.equal(isLive({ expires_at: 100 }, 99), true);
    assert.equal(isLive({ expires_at: null }, 99), true);
  });
});
