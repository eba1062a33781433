// The rules of text people read (src/shown-text.ts), pure: what a new name or description may hold, what
// is blank to the eye, and how stored text reaches a terminal.
import { describe, it } from 'node:test';
import assert from 'node:assert/strict';
import {
  MARKS_PER_CHARACTER_MAX,
  blankToTheEye,
  showableTextProblem,
  terminalJson,
  terminalOutput,
  terminalText,
} from '../../src/shown-text.ts';
import { makeStyle } from '../../src/cli/format.ts';

/** Every character a terminal would act on or hide, as a regular expression. */
// eslint-disable-next-line no-control-regex -- they are what it finds
const RAW = /[\u0000-\u0008\u000b-\u001f\u007f-\u009f\u200b-\u200f\u202a-\u202e\u2066-\u2069]/;

describe('showableTextProblem', () => {
  it('refuses what hides itself or turns the text around, naming the character', () => {
    for (const [text, said] of [
      ['pay\u202egnp.exe', 'U+202E'],
      ['admin\u200b', 'U+200B'],
      ['a\u2066b', 'U+2066'],
      ['soft\u00adhyphen', 'U+00AD'],
      ['tag\u{e0041}', 'U+E0041'],
      ['filler\u3164', 'U+3164'],
    ] as const) {
      const problem = showableTextProblem(text);
      assert.match(problem ?? '', /invisible or formatting characters/, text);
      assert.ok(problem?.includes(`(it has ${said})`), `${text}: ${problem}`);
    }
    assert.match(showableTextProblem('bell\u0007') ?? '', /control characters \(it has U\+0007\)$/);
    assert.match(showableTextProblem('half\ud800') ?? '', /lone surrogate/);
  });

  it('allows a tab only where asked, and says so', () => {
    assert.match(showableTextProblem('a\tb') ?? '', /control characters \(it has U\+0009\)$/);
    assert.equal(showableTextProblem('a\tb', { tab: true }), undefined);
    assert.match(showableTextProblem('a\nb', { tab: true }) ?? '', /U\+000A\); a tab is allowed$/);
  });

  it(`refuses more than ${MARKS_PER_CHARACTER_MAX} marks on one character, and keeps the accents of real scripts`, () => {
    const zalgo = `Score${'\u0336'.repeat(250)}`;
    assert.match(showableTextProblem(zalgo) ?? '', /combining marks on one character/);
    assert.match(showableTextProblem(`e${'\u0301'.repeat(MARKS_PER_CHARACTER_MAX + 1)}`) ?? '', /marks/);
    for (const fine of [
      'Tiếng Việt'.normalize('NFD'),
      'ภาษาไทย น้ำ',
      'हिन्दी',
      'שָׁלוֹם',
      `e${'\u0301'.repeat(MARKS_PER_CHARACTER_MAX)}`,
      'Score Tracker 🎮',
      'Ｆｕｌｌ ｗｉｄｔｈ',
    ])
      assert.equal(showableTextProblem(fine), undefined, fine);
  });
});

describe('blankToTheEye', () => {
  it('is true of text that shows nothing: spaces, marks alone, blank braille', () => {
    for (const blank of ['', '   ', '\u2800', ' \u2800\u3000\u2800 ', '\u0301\u0308', '\u00a0\u2800'])
      assert.equal(blankToTheEye(blank), true, JSON.stringify(blank));
    for (const shown of ['a', ' . ', '\u2801', '⠀x', '\u0301a'])
      assert.equal(blankToTheEye(shown), false, JSON.stringify(shown));
  });
});

describe('terminalText', () => {
  it('writes every control, format and separator character as an escape, the rest as it is', () => {
    const hostile = 'dev\u001b]0;owned\u0007\u001b[2J';
    assert.equal(terminalText(hostile), 'dev\\x1b]0;owned\\x07\\x1b[2J');
    assert.equal(terminalText('C1 \u009b2K'), 'C1 \\x9b2K');
    assert.equal(terminalText('pay\u202egnp.exe'), 'pay\\u202egnp.exe');
    assert.equal(terminalText('a\tb\nc\u2028'), 'a\\tb\\nc\\u2028');
    assert.equal(terminalText('tag\u{e0041}'), 'tag\\u{e0041}');
    assert.equal(terminalText('Ünïcödé ✓ 🎮 C:\\path'), 'Ünïcödé ✓ 🎮 C:\\path');
    assert.doesNotMatch(terminalText(hostile), RAW);
  });

  it("keeps the CLI's own colours and line breaks in whole output, and nothing else raw", () => {
    const style = makeStyle(true);
    const output = `${style.bold('Token 7')} for dev\u001b]0;owned\u0007\n${style.dim('next')}\u009b`;
    const shown = terminalOutput(output, true);
    assert.equal(shown, `${style.bold('Token 7')} for dev\\x1b]0;owned\\x07\n${style.dim('next')}\\x9b`);
    assert.doesNotMatch(terminalOutput(output, false), RAW);
  });

  it('writes JSON with no raw control or format character, reading back as the same text', () => {
    const value = { description: 'dev\u001b]0;owned\u0007 \u009b pay\u202egnp \u{e0041}' };
    const json = terminalJson(value);
    assert.doesNotMatch(json, RAW);
    assert.deepEqual(JSON.parse(json), value);
  });
});
