// test/run.ts deals the test files into shards of about equal weight, each run in one process.
import { describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { shards } from '../run.ts';

const sizes: Record<string, number> = {
  'test/a.test.ts': 9_000,
  'test/b.test.ts': 7_000,
  'test/c.test.ts': 5_000,
  'test/d.test.ts': 4_000,
  'test/e.test.ts': 3_000,
  'test/f.test.ts': 2_000,
  'test/g.test.ts': 1_000,
  'test/web/h.browser.test.ts': 2_500,
};
const size = (file: string) => sizes[file]!;
const files = Object.keys(sizes);
const weight = (shard: string[]) =>
  shard.reduce((sum, file) => sum + size(file) * (file.endsWith('.browser.test.ts') ? 3 : 1), 0);

describe('test shards (test/run.ts)', () => {
  it('deals every file to exactly one shard, the heaviest shard first', () => {
    const dealt = shards(files, 3, size);
    assert.equal(dealt.length, 3);
    assert.deepEqual(dealt.flat().sort(), [...files].sort());
    const weights = dealt.map(weight);
    assert.deepEqual(
      weights,
      [...weights].sort((a, b) => b - a),
    );
  });

  it('keeps the shards within one file of each other, a browser test weighing three times its size', () => {
    const dealt = shards(files, 3, size);
    const weights = dealt.map(weight);
    // 7,500 for the browser test: three times its 2,500 bytes
    assert.ok(dealt.some((shard) => shard.includes('test/web/h.browser.test.ts') && weight(shard) >= 7_500));
    assert.ok(Math.max(...weights) - Math.min(...weights) <= 9_000, weights.join(', '));
  });

  it('makes no empty shard: fewer files than shards give one shard a file', () => {
    assert.deepEqual(shards(['test/a.test.ts', 'test/b.test.ts'], 8, size), [
      ['test/a.test.ts'],
      ['test/b.test.ts'],
    ]);
    assert.deepEqual(shards([], 4, size), []);
  });
});
