// bench/costs.ts: the walk over the seeded tokens that the capacity loads read.
import { describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { spreadReadHeaders } from '../../bench/costs.ts';
import { benchSecret } from '../../bench/seed.ts';

describe('the capacity loads’ walk over the tokens', () => {
  it('reads every seeded token once before it reads one again, from any starting point', () => {
    const tokens = 3000;
    const secrets = new Map(Array.from({ length: tokens }, (_, i) => [benchSecret(i + 1), i + 1]));
    for (const from of [0, 1_000_000]) {
      const walk = spreadReadHeaders(tokens, from);
      const seen = new Set<number>();
      for (let n = 0; n < tokens; n++) {
        const id = secrets.get(walk(n)['x-ripple-token']!);
        assert.ok(id !== undefined, `request ${n} reads a seeded token`);
        seen.add(id);
      }
      assert.equal(seen.size, tokens);
    }
  });

  it('does not read neighbouring tokens one after another', () => {
    const walk = spreadReadHeaders(3_000_000);
    assert.notEqual(walk(0)['x-ripple-token'], walk(1)['x-ripple-token']);
    assert.equal(walk(1)['x-ripple-token'], benchSecret(1 + (1_000_003 % 3_000_000)));
  });
});
