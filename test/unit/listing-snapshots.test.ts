// The pure parts of deep listing pages: building a snapshot, finding a page's first id, the LRU bound.
import { describe, it } from 'node:test';
import assert from 'node:assert/strict';
import {
  ListingSnapshots,
  firstIdOfPage,
  makeSnapshot,
  type ListingSnapshot,
} from '../../src/tokens/listing-snapshots.ts';

const rows = (ids: number[], expiry: Record<number, number> = {}) =>
  ids.map((id) => ({ id, expires_at: expiry[id] ?? null }));

/** The model: what OFFSET would skip to, computed the slow way. */
function modelFirstId(ids: number[], expiry: Record<number, number>, offset: number, now: number) {
  const live = ids.filter((id) => expiry[id] === undefined || expiry[id] > now);
  return live[offset];
}

describe('listing snapshots', () => {
  it('keep ids in order, and no expiry array when no token expires', () => {
    const s = makeSnapshot(7, rows([3, 5, 9]));
    assert.equal(s.version, 7);
    assert.deepEqual([...s.ids], [3, 5, 9]);
    assert.equal(s.expires, undefined);
    const e = makeSnapshot(1, rows([3, 5, 9], { 5: 100 }));
    assert.deepEqual([...e.expires!], [Infinity, 100, Infinity]);
  });

  it('find the first id of a page, or nothing past the end', () => {
    const s = makeSnapshot(1, rows([2, 4, 6, 8]));
    assert.equal(firstIdOfPage(s, 0, 0), 2);
    assert.equal(firstIdOfPage(s, 3, 0), 8);
    assert.equal(firstIdOfPage(s, 4, 0), undefined);
    assert.equal(firstIdOfPage(makeSnapshot(1, []), 0, 0), undefined);
  });

  it('skip tokens expired at the given time, as the query does (expires_at > now is alive)', () => {
    const ids = Array.from({ length: 40 }, (_, i) => i * 3 + 1);
    const expiry: Record<number, number> = {};
    for (const id of ids) if (id % 2 === 0) expiry[id] = 1000 + (id % 7) * 10;
    const s = makeSnapshot(1, rows(ids, expiry));
    for (const now of [0, 999, 1000, 1010, 1030, 1060, 5000])
      for (let offset = 0; offset <= ids.length; offset++)
        assert.equal(
          firstIdOfPage(s, offset, now),
          modelFirstId(ids, expiry, offset, now),
          `${now}/${offset}`,
        );
  });

  it('are returned only at the version they were read at', () => {
    const cache = new ListingSnapshots(100);
    cache.put(1, makeSnapshot(5, rows([1, 2])));
    assert.equal(cache.get(1, 4), undefined);
    assert.equal(cache.get(1, 6), undefined);
    assert.equal(cache.get(1, 5)?.version, 5);
    assert.equal(cache.get(2, 5), undefined);
    cache.put(1, makeSnapshot(6, rows([1, 2, 3])));
    assert.equal(cache.get(1, 5), undefined);
    assert.equal(cache.held, 3);
  });

  it('hold at most `capacity` ids, dropping the least recently used first', () => {
    const cache = new ListingSnapshots(10);
    const snap = (n: number): ListingSnapshot =>
      makeSnapshot(1, rows(Array.from({ length: n }, (_, i) => i + 1)));
    cache.put(1, snap(4));
    cache.put(2, snap(4));
    assert.ok(cache.get(1, 1)); // 1 is now the most recently used
    cache.put(3, snap(4)); // 12 > 10: user 2 goes
    assert.equal(cache.get(2, 1), undefined);
    assert.ok(cache.get(1, 1));
    assert.ok(cache.get(3, 1));
    assert.equal(cache.held, 8);
    cache.put(4, snap(11)); // larger than the whole cache: not kept, nothing else dropped
    assert.equal(cache.get(4, 1), undefined);
    assert.equal(cache.held, 8);
  });
});
