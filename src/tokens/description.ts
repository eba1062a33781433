// What a token's description may be: one rule for every way a token is made with one (POST /v1/tokens,
// the token page, `tokend token create`), each answering in its own error shape. `tokend import-ripple`
// copies existing tokens, and refuses only what cannot be stored (`unstorableDescription`).
import { storableText } from '../store/text.ts';
import type { DatabaseSchema } from '../store/database.ts';
import { showableTextProblem } from '../shown-text.ts';

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

/**
 * Why a new token may not be given this description, or undefined: too long (for the tables of `schema`),
 * a control, invisible or formatting character (a tab is allowed), combining marks piled on one
 * character (the rule of application names too: src/shown-text.ts), or a lone surrogate (no character:
 * UTF-8 cannot hold it). The answer completes "The description …". Descriptions stored before (the
 * family's website lets users write anything) are shown escaped, never refused.
 */
export function descriptionProblem(text: string, schema: DatabaseSchema = 'tokend'): string | undefined {
  if (
    schema === 'ripple'
      ? codePoints(text) > FAMILY_MAX_DESCRIPTION_LENGTH
      : text.length > MAX_DESCRIPTION_LENGTH
  )
    return tooLong(schema === 'ripple' ? FAMILY_MAX_DESCRIPTION_LENGTH : MAX_DESCRIPTION_LENGTH);
  return showableTextProblem(text, { tab: true });
}
