// What a store's tables are like: tokend's own, or a Ripple-family database's served in place
// (DATABASE_SCHEMA=ripple, src/store/ripple.ts). Each way the two differ that a rule outside the store
// must know is one property or method of StoreLayout, decided here; the store owns the one object
// (Store.layout), and no caller asks which schema it runs on. The store's own differences (the in-place
// plugin that renames tables and guards the family's columns, the migrations, the numeric user ids of
// its rows) are src/store/database.ts's, which makes the layout.
import type { DatabaseConfig } from '../config.ts';
import { charsetHolds, charsetName } from './charsets.ts';
import { FAMILY_FORM_CHARSETS, type FamilyCharsets } from './ripple.ts';

/** Which tables a store serves from: tokend's own, or a Ripple-family database's in place (DATABASE_SCHEMA). */
export type DatabaseSchema = 'tokend' | 'ripple';

/** A text column of the users or tokens table whose characters may be limited (in place: the family's). */
export type TextColumn = 'users.username' | 'tokens.description';

export interface StoreLayout {
  /** tokend's own tables, or a Ripple-family database's in place: a name, for what a store says of itself */
  readonly schema: DatabaseSchema;
  /**
   * Whether tokend makes and loads users here (`tokend user create`, `import`, `import-ripple`, the
   * start-up's hint for a first user). In place it makes none: the family's users are the server's own,
   * signed up on its website with the columns only it knows, and no name tokend made could collide with
   * one of the family's.
   */
  readonly makesUsers: boolean;
  /**
   * Whose a token row found by the MD5 form of its secret is (the token lookup looks for it beside the
   * SHA-256 hash). In place it is one of the family's own tokens: its form stays as it is (the family's
   * programs find their tokens by it) and the family's rules apply to it (a private one asks for the
   * family's privileges). In tokend's own tables it is a token `tokend import-ripple` copied, stored with
   * a prefix, whose hash is replaced by the SHA-256 one on its first use. In place, the public API tokens
   * tokend makes are stored in the family's form too (src/auth/secret.ts storedSecretHash), so the rest of
   * the server's API accepts them.
   */
  readonly familyTokens: boolean;
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
  makesUsers: true,
  familyTokens: false,
  unstorable: () => undefined,
  description: { maxLength: MAX_DESCRIPTION_LENGTH, counts: 'code units' },
};

/**
 * A Ripple-family database in place, its columns in the character sets `charsets` names (read by the
 * store when it opens; the family's latin1 when not given).
 */
export function familyLayout(charsets: FamilyCharsets = FAMILY_FORM_CHARSETS): StoreLayout {
  return {
    schema: 'ripple',
    makesUsers: false,
    familyTokens: true,
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

/** Which tables the database of `config` is served from: a Ripple-family database only with DATABASE_SCHEMA=ripple. */
export const databaseSchemaOf = (config: DatabaseConfig): DatabaseSchema =>
  config.kind === 'mysql' && config.schema === 'ripple' ? 'ripple' : 'tokend';

/**
 * The layout of the database of `config`, before a store is open (what the CLI refuses before it opens
 * one); the store's own (Store.layout) also knows the character sets the database's columns really have.
 */
export const layoutOf = (config: DatabaseConfig): StoreLayout =>
  databaseSchemaOf(config) === 'ripple' ? familyLayout() : TOKEND_LAYOUT;
