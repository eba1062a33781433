// How tokend reads an integer written in decimal, wherever one comes in as text (query values, form
// fields, command-line options, environment variables): ASCII digits only, never JavaScript's looser
// Number() (which takes '', ' ', '1e3', '0x10' and '1.0').

/** Which leading sign the text may have. */
export type Sign = 'none' | 'plus' | 'any';

const DIGITS: Readonly<Record<Sign, RegExp>> = { none: /^\d+$/, plus: /^\+?\d+$/, any: /^[+-]?\d+$/ };

/**
 * The number decimal digits spell, with a leading sign where `sign` allows one; undefined for any other
 * text (spaces included: a caller that allows them trims first). Digits past 2^53 give the nearest
 * double, or Infinity: callers compare the value with their bounds.
 */
export function decimalInteger(text: string, sign: Sign = 'none'): number | undefined {
  return DIGITS[sign].test(text) ? Number(text) : undefined;
}

/** An integer from min to max written in decimal digits (no sign, no spaces), or undefined. */
export function integerInRange(text: string, min: number, max: number): number | undefined {
  const n = decimalInteger(text);
  return n !== undefined && Number.isSafeInteger(n) && n >= min && n <= max ? n : undefined;
}
