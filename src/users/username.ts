// Usernames: how they compare, and which are allowed.

/**
 * The lookup key of a username: trimmed, in Unicode NFKC, case-folded, spaces and underscores made
 * equivalent. So `ａｌｉｃｅ` (fullwidth), `ALICE` and `alice` are one name, and so are `Straße` and
 * `STRASSE`. (Case folding is upper- then lower-casing, which folds `ß` to `ss` as full case folding
 * does; NFKC again after it, as NFKC_Casefold does.)
 */
export function usernameSafe(username: string): string {
  return username.trim().normalize('NFKC').toUpperCase().toLowerCase().normalize('NFKC').replaceAll(' ', '_');
}

export const MAX_USERNAME_LENGTH = 255;

// Control characters, format characters (zero-width spaces and joiners, direction marks), line and
// paragraph separators, and the ideographic space: they make one name look like another, or like none.
const INVISIBLE = /[\p{Cc}\p{Cf}\p{Zl}\p{Zp}\u3000\u115f\u1160\u3164\uffa0]/u;

/** Why a new username is refused, or undefined when it may be used. */
export function usernameProblem(username: string): string | undefined {
  const name = username.trim();
  if (name === '' || name.length > MAX_USERNAME_LENGTH)
    return `a username has 1 to ${MAX_USERNAME_LENGTH} characters`;
  if (INVISIBLE.test(name))
    return 'a username may not contain control, format or invisible characters (such as zero-width spaces)';
  if (name.normalize('NFKC').trim() === '') return 'a username must have visible characters';
  return undefined;
}
