// Text that people read, in one place: what new names and descriptions may hold (no character that hides
// itself or turns the text around, no marks piled on one letter, no name that shows nothing), and how
// stored text reaches a terminal (no control or formatting character raw: each written as an escape). The
// pages escape HTML (src/web/html.ts); every CLI table and line that prints stored text goes through
// `terminalText`.

/**
 * Characters no new name or description may hold: controls (C0, DEL, C1), format characters (a
 * right-to-left override turns the text around it; a zero-width joiner or space hides in it), line and
 * paragraph separators, surrogates, private-use characters, and whatever Unicode says to draw as nothing
 * (soft hyphens, variation selectors, tags, Hangul fillers): invisible, they make two texts that look the
 * same differ, or make one read as another ("pay\u202Egnp.exe" shows as "payexe.png").
 */
const HIDDEN = /[\p{Cc}\p{Cf}\p{Cs}\p{Co}\p{Zl}\p{Zp}\p{Default_Ignorable_Code_Point}]/u;

/** The same, with a tab allowed (a token description may hold one). */
const HIDDEN_BUT_TAB = /(?!\t)[\p{Cc}\p{Cf}\p{Cs}\p{Co}\p{Zl}\p{Zp}\p{Default_Ignorable_Code_Point}]/u;

/** Most combining marks one character may carry: enough for every script's accents and tone marks. */
export const MARKS_PER_CHARACTER_MAX = 4;
const PILED_MARKS = new RegExp(`\\p{M}{${MARKS_PER_CHARACTER_MAX + 1},}`, 'u');

/** What draws nothing on its own: spaces, combining marks, and the blank braille pattern (U+2800). */
const BLANK = /[\p{White_Space}\p{M}\u2800]/gu;

/** A character as U+XXXX. */
export const codePointOf = (c: string): string =>
  `U+${(c.codePointAt(0) ?? 0).toString(16).toUpperCase().padStart(4, '0')}`;

/**
 * Why new text (an application's name, a token's description) may not be shown as it is, or undefined:
 * a hidden or formatting character (a tab only where `tab` allows it), or more than
 * MARKS_PER_CHARACTER_MAX combining marks on one character ("zalgo" text, which spills over the lines
 * around it). The answer completes "The name …" or "The description …".
 */
export function showableTextProblem(text: string, options: { tab?: boolean } = {}): string | undefined {
  const hidden = (options.tab ? HIDDEN_BUT_TAB : HIDDEN).exec(text)?.[0];
  if (hidden !== undefined) {
    if (/\p{Cc}/u.test(hidden))
      return `may not contain control characters (it has ${codePointOf(hidden)})${options.tab ? '; a tab is allowed' : ''}`;
    if (/\p{Cs}/u.test(hidden)) return 'may not contain a lone surrogate (half of a UTF-16 pair)';
    return (
      'may not contain invisible or formatting characters, such as a right-to-left override, a ' +
      `zero-width space or a soft hyphen (it has ${codePointOf(hidden)})`
    );
  }
  if (PILED_MARKS.test(text))
    return `may not pile more than ${MARKS_PER_CHARACTER_MAX} accents or other combining marks on one character`;
  return undefined;
}

/** Whether text shows nothing to the eye: only spaces, combining marks and blank braille (or nothing). */
export const blankToTheEye = (text: string): boolean => text.replace(BLANK, '') === '';

/** What a terminal must never receive raw: controls (ESC, BEL, CSI, …), format characters, separators. */
const UNPRINTABLE = /[\p{Cc}\p{Cf}\p{Cs}\p{Zl}\p{Zp}]/gu;

/** One character as an escape a person can read: \x1b, \t, \u202e. */
function escaped(c: string): string {
  const code = c.codePointAt(0) ?? 0;
  if (c === '\t') return '\\t';
  if (c === '\n') return '\\n';
  if (c === '\r') return '\\r';
  if (code <= 0xff) return `\\x${code.toString(16).padStart(2, '0')}`;
  return code <= 0xffff ? `\\u${code.toString(16).padStart(4, '0')}` : `\\u{${code.toString(16)}}`;
}

/**
 * Stored text as a terminal may print it: every control, format and separator character written as an
 * escape (`\x1b`, `\u202e`), so a row can neither send the terminal a command (clear the screen, set its
 * title, colour what follows) nor turn a line around. Everything else is left as it is.
 */
export const terminalText = (text: string): string => text.replace(UNPRINTABLE, escaped);

/**
 * A CLI's whole output as a terminal may print it: `terminalText`, except line breaks and the colour
 * codes the CLI's own style writes (ESC [ n m), when `colour` says it wrote some. The stored values in it
 * were already made safe one by one; this is the net under them.
 */
export function terminalOutput(text: string, colour: boolean): string {
  return text
    .split('\n')
    .map((line) =>
      colour
        ? line
            // eslint-disable-next-line no-control-regex -- the style's own colour codes are kept
            .split(/(\x1b\[\d{1,2}m)/)
            .map((part, i) => (i % 2 === 1 ? part : terminalText(part)))
            .join('')
        : terminalText(line),
    )
    .join('\n');
}

/**
 * JSON whose strings hold no raw control, format or separator character beyond what JSON.stringify
 * escapes (C1 controls, a right-to-left override): each as \uXXXX, which reads back as the same text.
 */
export const terminalJson = (value: unknown): string =>
  JSON.stringify(value).replace(UNPRINTABLE, (c) =>
    [...Array(c.length).keys()].map((i) => `\\u${c.charCodeAt(i).toString(16).padStart(4, '0')}`).join(''),
  );
