// test/run.ts deals the test files into shards of about equal weight, each run in one process; a file
// weighs its time in a recent run, or its size when it has none.
import { describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { fileWeights, shards } from '../run.ts';

const times: Record<string, number> = {
  'test/a.test.ts': 9_000,
  'test/b.test.ts': 7_000,
  'test/c.test.ts': 5_000,
  'test/d.test.ts': 4_000,
  'test/e.test.ts': 3_000,
  'test/f.test.ts': 2_000,
  'test/g.test.ts': 1_000,
  'test/web/h.browser.test.ts': 7_500,
};
const weight = (file: string) => times[file]!;
const files = Object.keys(times);
const total = (shard: string[]) => shard.reduce((sum, file) => sum + weight(file), 0);

describe('test shards (test/run.ts)', () => {
  it('deals every file to exactly one shard, the heaviest shard first', () => {
    const dealt = shards(files, 3, weight);
    assert.equal(dealt.length, 3);
    assert.deepEqual(dealt.flat().sort(), [...files].sort());
    const weights = dealt.map(total);
    assert.deepEqual(
      weights,
      [...weights].sort((a, b) => b - a),
    );
  });

  it('keeps the shards within one file of each other', () => {
    const weights = shards(files, 3, weight).map(total);
    assert.ok(Math.max(...weights) - Math.min(...weights) <= 9_000, weights.join(', '));
    // 38,500 ms in all: the best split is 13,000 / 13,000 / 12,500
    assert.ok(Math.max(...weights) <= 14_000, weights.join(', '));
  });

  it('makes no empty shard: fewer files than shards give one shard a file', () => {
    assert.deepEqual(shards(['test/a.test.ts', 'test/b.test.ts'], 8, weight), [
      ['test/a.test.ts'],
      ['test/b.test.ts'],
    ]);
    assert.deepEqual(shards([], 4, weight), []);
  });
});

describe('file weights (test/run.ts)', () => {
  const sizes: Record<string, number> = {
    'test/old.test.ts': 10_000,
    'test/new.test.ts': 4_000,
    'test/web/new.browser.test.ts': 1_000,
  };
  const size = (file: string) => {
    const found = sizes[file];
    if (found === undefined) throw new Error(`ENOENT: ${file}`);
    return found;
  };

  it('is the recorded time, else the size at the recorded milliseconds per byte (a browser test three times)', () => {
    // 20,000 ms for 10,000 bytes: 2 ms per byte
    const weigh = fileWeights(new Map([['test/old.test.ts', 20_000]]), size);
    assert.equal(weigh('test/old.test.ts'), 20_000);
    assert.equal(weigh('test/new.test.ts'), 8_000);
    assert.equal(weigh('test/web/new.browser.test.ts'), 6_000);
  });

  it('leaves out recorded files that are gone, and weighs by size alone when nothing is recorded', () => {
    const weigh = fileWeights(
      new Map([
        ['test/old.test.ts', 20_000],
        ['test/gone.test.ts', 1_000_000],
      ]),
      size,
    );
    assert.equal(weigh('test/new.test.ts'), 8_000);
    assert.equal(fileWeights(new Map(), size)('test/new.test.ts'), 4_000);
  });
});
