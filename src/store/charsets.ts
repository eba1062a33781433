// Which characters a MySQL/MariaDB text column can hold, by its character set. A value compared with a
// column of a narrower set than the connection's (utf8mb4) is converted to the column's set first, and
// a value that set cannot hold fails the whole statement ("Illegal mix of collations"); written into
// such a column, in strict mode, it fails the statement too ("Incorrect string value"). The in-place
// layout (src/store/ripple.ts) asks here before it sends a value to one of a family database's columns.

/**
 * The characters of bytes 0x80–0x9F in MySQL's latin1, which is Windows-1252 with the five bytes that
 * code page leaves undefined mapped to the C1 controls of the same number.
 */
const LATIN1_80_9F =
  '\u20ac\u0081\u201a\u0192\u201e\u2026\u2020\u2021\u02c6\u2030\u0160\u2039\u0152\u008d\u017d\u008f' +
  '\u0090\u2018\u2019\u201c\u201d\u2022\u2013\u2014\u02dc\u2122\u0161\u203a\u0153\u009d\u017e\u0178';

const LATIN1_EXTRA = new Set(Array.from(LATIN1_80_9F, (c) => c.codePointAt(0)!));

/** Whether MySQL's latin1 has a byte for this code point. */
const inLatin1 = (cp: number): boolean => cp < 0x80 || (cp >= 0xa0 && cp <= 0xff) || LATIN1_EXTRA.has(cp);

/** Every code point of `text` (a lone surrogate is one that no character set holds). */
function everyCodePoint(text: string, holds: (cp: number) => boolean): boolean {
  for (const c of text) {
    const cp = c.codePointAt(0)!;
    if (cp >= 0xd800 && cp <= 0xdfff) return false;
    if (!holds(cp)) return false;
  }
  return true;
}

export type CharsetTest = (text: string) => boolean;

const BY_CHARSET: Readonly<Record<string, CharsetTest>> = {
  latin1: (text) => everyCodePoint(text, inLatin1),
  ascii: (text) => everyCodePoint(text, (cp) => cp < 0x80),
  // MySQL's utf8 (utf8mb3) and ucs2 hold the Basic Multilingual Plane only: no emoji
  utf8: (text) => everyCodePoint(text, (cp) => cp <= 0xffff),
  utf8mb3: (text) => everyCodePoint(text, (cp) => cp <= 0xffff),
  ucs2: (text) => everyCodePoint(text, (cp) => cp <= 0xffff),
  utf8mb4: (text) => everyCodePoint(text, () => true),
  utf16: (text) => everyCodePoint(text, () => true),
  utf16le: (text) => everyCodePoint(text, () => true),
  utf32: (text) => everyCodePoint(text, () => true),
};

/**
 * Whether a column of `charset` holds every character of a text. A character set not named here (a
 * national code page such as cp1251) is taken to hold ASCII only: a value beyond it never reaches such a
 * column, and so is never found there, rather than failing the statement.
 */
export const charsetHolds = (charset: string): CharsetTest =>
  BY_CHARSET[charset.toLowerCase()] ?? BY_CHARSET.ascii!;

/** The name of a character set for a message: latin1 is Windows-1252 in MySQL. */
export const charsetName = (charset: string): string =>
  charset.toLowerCase() === 'latin1' ? 'Latin-1 (Windows-1252)' : charset;
