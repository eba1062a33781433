// What a token's description may be: one rule for every way a token is made with one (POST /v1/tokens,
// the token page, `tokend token create`), each answering in its own error shape. `tokend import-ripple`
// copies existing tokens, and refuses only what cannot be stored (`unstorableDescription`).
import { storableText } from '../store/text.ts';
import { MAX_DESCRIPTION_LENGTH, TOKEND_LAYOUT, type StoreLayout } from '../store/layout.ts';

export { MAX_DESCRIPTION_LENGTH, FAMILY_MAX_DESCRIPTION_LENGTH } from '../store/layout.ts';

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
 * Why a new token may not be given this description in the tables of `layout`, or undefined: too long
 * for them (tokend's own count UTF-16 code units, the family's varchar characters), a control character
 * (C0 but tab, DEL, C1), a lone surrogate (no character: UTF-8 cannot hold it), or, in place, a
 * character the family's column cannot store (its latin1 holds no Japanese): refused rather than stored
 * changed. The answer completes "The description …".
 */
export function descriptionProblem(text: string, layout: StoreLayout = TOKEND_LAYOUT): string | undefined {
  const { maxLength, counts } = layout.description;
  if ((counts === 'characters' ? codePoints(text) : text.length) > maxLength) return tooLong(maxLength);
  const control = CONTROL.exec(text);
  if (control)
    return `may not contain control characters (it has ${codePoint(control[0])}); a tab is allowed`;
  if (!text.isWellFormed()) return 'may not contain a lone surrogate (half of a UTF-16 pair)';
  const unstorable = layout.unstorable('tokens.description', text);
  if (unstorable !== undefined) return `holds ${unstorable}`;
  return undefined;
}
