// What a token's description may be: one rule for every way a token is made with one (POST /v1/tokens,
// the token page, `tokend token create`), each answering in its own error shape. `tokend import-ripple`
// copies existing tokens, and refuses only what cannot be stored (`unstorableDescription`).
import { storableText } from '../store/text.ts';
import { MAX_DESCRIPTION_LENGTH, TOKEND_LAYOUT, type StoreLayout } from '../store/layout.ts';
import { showableTextProblem } from '../shown-text.ts';

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

/**
 * Why a new token may not be given this description in the tables of `layout`, or undefined: too long
 * for them (tokend's own count UTF-16 code units, the family's varchar characters), a control, invisible
 * or formatting character (a tab is allowed), combining marks piled on one character (the rule of
 * application names too: src/shown-text.ts), a lone surrogate (no character: UTF-8 cannot hold it), or,
 * in place, a character the family's column cannot store (its latin1 holds no Japanese): refused rather
 * than stored changed. The answer completes "The description …". Descriptions stored before (the
 * family's website lets users write anything) are shown escaped, never refused.
 */
export function descriptionProblem(text: string, layout: StoreLayout = TOKEND_LAYOUT): string | undefined {
  const { maxLength, counts } = layout.description;
  if ((counts === 'characters' ? codePoints(text) : text.length) > maxLength) return tooLong(maxLength);
  const problem = showableTextProblem(text, { tab: true });
  if (problem !== undefined) return problem;
  const unstorable = layout.unstorable('tokens.description', text);
  if (unstorable !== undefined) return `holds ${unstorable}`;
  return undefined;
}
