// What a store's tables are like: tokend's own, or a Ripple-family database's served in place
// (DATABASE_SCHEMA=ripple, src/store/ripple.ts). Each difference between the two that a rule outside the
// store must know is one property or method here, and the store owns the one object: no caller asks which
// schema it runs on.
import { charsetHolds, charsetName } from './charsets.ts';
import { FAMILY_FORM_CHARSETS, type FamilyCharsets } from './ripple.ts';

/** Which tables a store serves from: tokend's own, or a Ripple-family database's in place (DATABASE_SCHEMA). */
export type DatabaseSchema = 'tokend' | 'ripple';

/** A text column of the users or tokens table whose characters may be limited (in place: the family's). */
export type TextColumn = 'users.username' | 'tokens.description';

export interface StoreLayout {
  /** tokend's own tables, or a Ripple-family database's in place */
  readonly schema: DatabaseSchema;
  /**
   * Why a text cannot be stored in `column`, completing "… holds" (a character the column's set has no
   * byte for: the first one), or undefined. tokend's own tables hold any character; in place the
   * family's column holds those of its character set (latin1 in the family's own database).
   */
  unstorable(column: TextColumn, text: string): string | undefined;
  /**
   * The longest token description the tokens table holds: in UTF-16 code units in tokend's own tables
   * (their rule), in characters (code points, as MySQL counts a varchar) in the family's varchar(255).
   */
  readonly description: { readonly maxLength: number; readonly counts: 'code units' | 'characters' };
}

/** Longest token description in tokend's own tables, in UTF-16 code units (JavaScript string length). */
export const MAX_DESCRIPTION_LENGTH = 1024;
/** Longest description a Ripple-family database holds: its tokens.description is varchar(255). */
export const FAMILY_MAX_DESCRIPTION_LENGTH = 255;

const codePoint = (c: string): string => `U+${c.codePointAt(0)!.toString(16).toUpperCase().padStart(4, '0')}`;

/** tokend's own tables (every backend): any character, descriptions of 1024 code units. */
export const TOKEND_LAYOUT: StoreLayout = {
  schema: 'tokend',
  unstorable: () => undefined,
  description: { maxLength: MAX_DESCRIPTION_LENGTH, counts: 'code units' },
};

/** A Ripple-family database in place, its columns in the character sets `charsets` names. */
export function familyLayout(charsets: FamilyCharsets = FAMILY_FORM_CHARSETS): StoreLayout {
  return {
    schema: 'ripple',
    unstorable(column, text) {
      const charset = charsets.get(column) ?? 'latin1';
      const holds = charsetHolds(charset);
      if (holds(text)) return undefined;
      const first = [...text].find((c) => !holds(c)) ?? '';
      return (
        `a character the server's database cannot store (${codePoint(first)} ${JSON.stringify(first)}): ` +
        `its ${column.replace('.', ' ')} column holds only ${charsetName(charset)} characters`
      );
    },
    description: { maxLength: FAMILY_MAX_DESCRIPTION_LENGTH, counts: 'characters' },
  };
}
