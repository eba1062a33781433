// The one writer of times as text: the API's RFC 3339, the CLI's tables, the forms' dates, all UTC.
import { describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { isoTime, plainTime, utcDate } from '../../src/utc-time.ts';

describe('times as text (UTC)', () => {
  it('writes whole seconds as RFC 3339, a table’s time and a day', () => {
    const at = Date.UTC(2026, 10, 26, 5, 0, 7) / 1000;
    assert.equal(isoTime(at), '2026-11-26T05:00:07Z');
    assert.equal(plainTime(at), '2026-11-26 05:00:07');
    assert.equal(utcDate(at), '2026-11-26');
    assert.equal(isoTime(0), '1970-01-01T00:00:00Z');
    // the day is UTC's, whatever the zone of the process
    assert.equal(utcDate(Date.UTC(2026, 0, 1, 23, 59, 59) / 1000), '2026-01-01');
  });
});
