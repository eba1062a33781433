// The one rule for relative times on the pages: rounded to the nearest unit, so a time seconds short of a
// boundary reads as the boundary does, and the expiry choices read as the list then shows them.
import { describe, it } from 'node:test';
import assert from 'node:assert/strict';
import fc from 'fast-check';
import { expiryLabel, measure, timeFromNow } from '../../src/web/relative-time.ts';
import { expiryChoices } from '../../src/tokens/pages/expiry.ts';

const MINUTE = 60;
const HOUR = 3600;
const DAY = 86_400;
const NOW = 1_800_000_000;

describe('timeFromNow', () => {
  it('reads a time seconds short of a boundary as the boundary itself', () => {
    for (const [seconds, text] of [
      [HOUR, 'in 1 hour'],
      [DAY, 'in 1 day'],
      [7 * DAY, 'in 1 week'],
      [30 * DAY, 'in 1 month'],
      [90 * DAY, 'in 3 months'],
      [365 * DAY, 'in 1 year'],
    ] as const)
      for (const short of [0, 1, 5, 29]) {
        assert.equal(timeFromNow(NOW + seconds - short, NOW), text, `${seconds} - ${short} s`);
        assert.equal(
          timeFromNow(NOW - seconds + short, NOW),
          text.replace(/^in (.*)$/, '$1 ago'),
          `-${seconds} + ${short} s`,
        );
      }
  });

  it('rounds to the nearest unit at each edge', () => {
    const cases: Array<[number, string]> = [
      [0, 'just now'],
      [-59, 'just now'],
      [30, 'in less than a minute'],
      [59, 'in less than a minute'],
      [60, 'in 1 minute'],
      [89, 'in 1 minute'],
      [90, 'in 2 minutes'],
      [-185, '3 minutes ago'],
      [59 * MINUTE + 29, 'in 59 minutes'],
      [59 * MINUTE + 30, 'in 1 hour'],
      [90 * MINUTE, 'in 2 hours'],
      [23 * HOUR + 29 * MINUTE, 'in 23 hours'],
      [23 * HOUR + 30 * MINUTE, 'in 1 day'],
      [3 * DAY + 60, 'in 3 days'],
      [6 * DAY + 11 * HOUR, 'in 6 days'],
      [6 * DAY + 12 * HOUR, 'in 1 week'],
      [10 * DAY, 'in 1 week'],
      [11 * DAY, 'in 2 weeks'],
      [29 * DAY, 'in 4 weeks'],
      [29 * DAY + 12 * HOUR, 'in 1 month'],
      [44 * DAY, 'in 1 month'],
      [45 * DAY, 'in 2 months'],
      [344 * DAY, 'in 11 months'],
      [345 * DAY, 'in 1 year'],
      [547 * DAY, 'in 1 year'],
      [548 * DAY, 'in 2 years'],
      [-2 * 365 * DAY, '2 years ago'],
    ];
    for (const [delta, text] of cases) assert.equal(timeFromNow(NOW + delta, NOW), text, String(delta));
  });

  it('never reads a longer time as a smaller amount of the same or a larger unit, in the future or the past', () => {
    const order = ['minute', 'hour', 'day', 'week', 'month', 'year'];
    const seconds = (count: number, unit: string) =>
      count *
      { minute: MINUTE, hour: HOUR, day: DAY, week: 7 * DAY, month: 30 * DAY, year: 365 * DAY }[unit]!;
    fc.assert(
      fc.property(
        fc.integer({ min: MINUTE, max: 20 * 365 * DAY }),
        fc.integer({ min: 0, max: 40 * DAY }),
        (a, more) => {
          const shorter = measure(a);
          const longer = measure(a + more);
          const rank = order.indexOf(longer.unit) - order.indexOf(shorter.unit);
          assert.ok(
            rank >= 0,
            `${a}s: ${shorter.count} ${shorter.unit}, ${a + more}s: ${longer.count} ${longer.unit}`,
          );
          if (rank === 0) assert.ok(longer.count >= shorter.count);
          // and each reading is within half a unit (or a day) of the time
          assert.ok(Math.abs(seconds(shorter.count, shorter.unit) - a) <= seconds(1, shorter.unit) / 2 + DAY);
          assert.equal(timeFromNow(NOW - a, NOW), `${timeFromNow(NOW + a, NOW).slice(3)} ago`);
        },
      ),
    );
  });
});

describe('expiry choices', () => {
  it('are named by the same rule that lists the token seconds later', () => {
    const labels = expiryChoices().map((c) => c.label);
    assert.deepEqual(labels, ['Never', 'In 1 day', 'In 1 week', 'In 1 month', 'In 3 months', 'In 1 year']);
    for (const choice of expiryChoices().filter((c) => c.value !== '')) {
      const seconds = Number(choice.value);
      assert.equal(expiryLabel(seconds), choice.label);
      for (const later of [0, 1, 10, 29])
        assert.equal(
          `In ${timeFromNow(NOW + seconds - later, NOW).slice(3)}`,
          choice.label,
          `${later} s later`,
        );
    }
  });
});
