// The token-description rule (src/tokens/description.ts): what a new token's description may hold, and
// the part of it an import of existing tokens applies.
import { describe, it } from 'node:test';
import assert from 'node:assert/strict';
import {
  MAX_DESCRIPTION_LENGTH,
  descriptionProblem,
  unstorableDescription,
} from '../../src/tokens/description.ts';
import { familyLayout } from '../../src/store/layout.ts';

describe('descriptionProblem()', () => {
  it('accepts text, a tab, and exactly the longest description', () => {
    for (const text of ['', 'my laptop', 'a\tb', 'ü 🙂 中文', '\u00a0', 'x'.repeat(MAX_DESCRIPTION_LENGTH)])
      assert.equal(descriptionProblem(text), undefined, JSON.stringify(text));
  });

  it('refuses C0 controls but tab, DEL and C1 controls, naming the first', () => {
    for (const code of [0x00, 0x01, 0x08, 0x0a, 0x0b, 0x0c, 0x0d, 0x1b, 0x1f, 0x7f, 0x80, 0x85, 0x9f]) {
      const hex = code.toString(16).toUpperCase().padStart(4, '0');
      assert.equal(
        descriptionProblem(`a${String.fromCharCode(code)}b\u0001`),
        `may not contain control characters (it has U+${hex}); a tab is allowed`,
      );
    }
    assert.equal(descriptionProblem('\u00a0\u0020\u007e'), undefined, 'the neighbours of the ranges');
  });

  it('refuses a lone surrogate, but not a pair', () => {
    assert.match(descriptionProblem('a\ud800')!, /lone surrogate/);
    assert.match(descriptionProblem('\udc00a')!, /lone surrogate/);
    assert.equal(descriptionProblem('\ud83d\ude42'), undefined);
  });

  it('refuses more than MAX_DESCRIPTION_LENGTH UTF-16 code units', () => {
    assert.equal(
      descriptionProblem('x'.repeat(MAX_DESCRIPTION_LENGTH + 1)),
      `is too long (longer than ${MAX_DESCRIPTION_LENGTH} characters)`,
    );
  });
});

describe('unstorableDescription()', () => {
  it('refuses only what a backend cannot store: length and NUL', () => {
    assert.equal(unstorableDescription('two\nlines\u0085'), undefined);
    assert.equal(unstorableDescription('a\0b'), 'contains a NUL character');
    assert.match(unstorableDescription('x'.repeat(MAX_DESCRIPTION_LENGTH + 1))!, /longer than 1024/);
  });
});

describe('descriptionProblem() in place (the family layout)', () => {
  const latin1 = familyLayout();
  const converted = familyLayout(new Map([['tokens.description', 'utf8mb4']]));

  it("counts characters as the family's varchar(255) does, and takes what its character set holds", () => {
    for (const text of ['', 'Café €', 'é'.repeat(255), '\u00a0\u00ff'])
      assert.equal(descriptionProblem(text, latin1), undefined, JSON.stringify(text));
    assert.equal(descriptionProblem('é'.repeat(256), latin1), 'is too long (longer than 255 characters)');
    assert.equal(descriptionProblem('😀'.repeat(255), converted), undefined);
    assert.match(descriptionProblem('😀'.repeat(256), converted)!, /longer than 255/);
  });

  it('refuses a character latin1 cannot hold, naming the first one, after the other rules', () => {
    assert.equal(
      descriptionProblem('ok 日本', latin1),
      'holds a character the server\'s database cannot store (U+65E5 "日"): its tokens description column holds only Latin-1 (Windows-1252) characters',
    );
    assert.match(descriptionProblem('😀', latin1)!, /\(U\+1F600 "😀"\)/);
    assert.equal(descriptionProblem('日本', converted), undefined);
    // a control character or a lone surrogate is named as everywhere
    assert.match(descriptionProblem('日\u0001', latin1)!, /control characters/);
    assert.match(descriptionProblem('日\ud800', latin1)!, /lone surrogate/);
  });
});
