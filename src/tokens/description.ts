// What a token's description may be: one rule for every way a token is made with one (POST /v1/tokens,
// the token page, `tokend token create`), each answering in its own error shape. `tokend import-ripple`
// copies existing tokens, and refuses only what cannot be stored (`unstorableDescription`).
import { storableText } from '../store/text.ts';
import type { DatabaseSchema } from '../store/database.ts';

/** Longest token description, in UTF-16 code units (JavaScript string length). */
export const MAX_DESCRIPTION_LENGTH = 1024;
/**
 * Longest description a Ripple-family database holds (its tokens.description is varchar(255), counted in
 * characters, which MariaDB counts as code points): in place.
 */
export const FAMILY_MAX_DESCRIPTION_LENGTH = 255;

/** Characters as a varchar column counts them: code points, an emoji being one, not two UTF-16 units. */
const codePoints = (text: string): number => {
  let n = 0;
  for (const _ of text) n++;
  return n;
};

const tooLong = (max: number) => `is too long (longer than ${max} characters)`;
const TOO_LONG = tooLong(MAX_DESCRIPTION_LENGTH);

/**
 * Why a description cannot be stored as it is on every backend, or undefined: too long, or holding NUL
 * (PostgreSQL refuses it in text). The answer completes "The description …".
 */
export function unstorableDescription(text: string): string | undefined {
  if (text.length > MAX_DESCRIPTION_LENGTH) return TOO_LONG;
  if (!storableText(text)) return 'contains a NUL character';
  return undefined;
}

// C0 controls but tab (NUL and line breaks included), DEL, and C1 controls: nothing a description shows,
// and a line break would split the CLI's table and the page's one-line field.
// eslint-disable-next-line no-control-regex
const CONTROL = /[\u0000-\u0008\u000a-\u001f\u007f-\u009f]/;

const codePoint = (c: string): string => `U+${c.charCodeAt(0).toString(16).toUpperCase().padStart(4, '0')}`;

/**
 * Why a new token may not be given this description, or undefined: too long (for the tables of `schema`), a control character (C0 but
 * tab, DEL, C1), or a lone surrogate (no character: UTF-8 cannot hold it). The answer completes
 * "The description …".
 */
export function descriptionProblem(text: string, schema: DatabaseSchema = 'tokend'): string | undefined {
  if (
    schema === 'ripple'
      ? codePoints(text) > FAMILY_MAX_DESCRIPTION_LENGTH
      : text.length > MAX_DESCRIPTION_LENGTH
  )
    return tooLong(schema === 'ripple' ? FAMILY_MAX_DESCRIPTION_LENGTH : MAX_DESCRIPTION_LENGTH);
  const control = CONTROL.exec(text);
  if (control)
    return `may not contain control characters (it has ${codePoint(control[0])}); a tab is allowed`;
  if (!text.isWellFormed()) return 'may not contain a lone surrogate (half of a UTF-16 pair)';
  return undefined;
}
