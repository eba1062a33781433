// The integer rule (src/decimal-integer.ts) and the API's reader of repeated values (src/http/first-value.ts).
import { describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { decimalInteger, integerInRange } from '../../src/decimal-integer.ts';
import { firstValue } from '../../src/http/first-value.ts';

describe('decimalInteger()', () => {
  it('reads ASCII digits, leading zeros included', () => {
    assert.equal(decimalInteger('0'), 0);
    assert.equal(decimalInteger('007'), 7);
    assert.equal(decimalInteger('1073741823'), 1073741823);
  });

  it("refuses what Number() takes: '', spaces, exponents, hex, fractions, other digits", () => {
    for (const text of ['', ' ', ' 1', '1 ', '1e3', '0x10', '1.0', '1_000', 'Infinity', '١٢', '１'])
      assert.equal(decimalInteger(text), undefined, JSON.stringify(text));
  });

  it('takes a sign only where asked', () => {
    assert.equal(decimalInteger('+5'), undefined);
    assert.equal(decimalInteger('+5', 'plus'), 5);
    assert.equal(decimalInteger('-5', 'plus'), undefined);
    assert.equal(decimalInteger('-5', 'any'), -5);
    assert.equal(decimalInteger('+-5', 'any'), undefined);
    assert.equal(decimalInteger('+', 'any'), undefined);
  });

  it('gives huge numbers approximately, for callers that compare with bounds', () => {
    assert.equal(decimalInteger('99999999999999999999'), 1e20);
    assert.equal(decimalInteger('9'.repeat(400)), Infinity);
  });
});

describe('integerInRange()', () => {
  it('is the value from min to max, else undefined', () => {
    assert.equal(integerInRange('1', 1, 10), 1);
    assert.equal(integerInRange('10', 1, 10), 10);
    assert.equal(integerInRange('0', 1, 10), undefined);
    assert.equal(integerInRange('11', 1, 10), undefined);
    assert.equal(integerInRange('+5', 1, 10), undefined);
    assert.equal(integerInRange(' 5', 1, 10), undefined);
  });

  it('refuses integers past 2^53 even when max is larger', () => {
    assert.equal(integerInRange(String(2 ** 53 + 2), 0, Infinity), undefined);
    assert.equal(integerInRange(String(2 ** 53 - 1), 0, Infinity), 2 ** 53 - 1);
  });
});

describe('firstValue()', () => {
  it('is the string, or the first of repeated values', () => {
    assert.equal(firstValue('a'), 'a');
    assert.equal(firstValue(['b', 'c']), 'b');
    assert.equal(firstValue(''), '');
  });

  it('is undefined for anything but a string first', () => {
    for (const value of [undefined, null, 1, [], [1, 'a'], {}]) assert.equal(firstValue(value), undefined);
  });
});
