// src/store/text.ts: which strings can match a text column, so that the others are never sent to SQL.
import { describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { canMatchText, storableText } from '../../src/store/text.ts';

describe('canMatchText', () => {
  it('refuses a NUL character anywhere', () => {
    assert.equal(canMatchText('abc'), true);
    assert.equal(canMatchText('a\0c'), false);
    assert.equal(canMatchText('\0'), false);
  });
  it('refuses a value longer than the column, when a length is given', () => {
    assert.equal(canMatchText('x'.repeat(64), 64), true);
    assert.equal(canMatchText('x'.repeat(65), 64), false);
    assert.equal(canMatchText('x'.repeat(10_000)), true);
  });
});

describe('storableText', () => {
  it('is false only for text holding NUL, whatever its length', () => {
    assert.equal(storableText(''), true);
    assert.equal(storableText('tab\there'), true);
    assert.equal(storableText('a\0'), false);
    assert.equal(storableText('x'.repeat(10_000)), true);
  });
});
