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

// Scripts whose letters include look-alikes of one another's (Latin "a", Cyrillic "а", Greek "α"…): a new
// name may use letters of one of them at most, once in NFKC (so fullwidth and mathematical letters count as
// the letters they stand for). Names written wholly in one script, such as a Cyrillic "асе" that looks like
// the Latin "ace", are beyond what this rule can see.
const LOOK_ALIKE_SCRIPTS = [
  ['Latin', /\p{Script=Latin}/u],
  ['Greek', /\p{Script=Greek}/u],
  ['Cyrillic', /\p{Script=Cyrillic}/u],
] as const;

/**
 * Why a new username is refused, or undefined when it may be used: the one rule for every new name
 * (`tokend user create`, `tokend import-ripple` and `tokend import`).
 */
export function usernameProblem(username: string): string | undefined {
  const name = username.trim();
  if (name === '' || name.length > MAX_USERNAME_LENGTH)
    return `a username has 1 to ${MAX_USERNAME_LENGTH} characters`;
  if (INVISIBLE.test(name))
    return 'a username may not contain control, format or invisible characters (such as zero-width spaces)';
  const normalised = name.normalize('NFKC');
  if (normalised.trim() === '') return 'a username must have visible characters';
  if (usernameSafe(name).length > MAX_USERNAME_LENGTH)
    return `a username is longer than ${MAX_USERNAME_LENGTH} characters once normalised`;
  const scripts = LOOK_ALIKE_SCRIPTS.filter(([, letters]) => letters.test(normalised)).map(
    ([script]) => script,
  );
  if (scripts.length > 1)
    return (
      `a username may not mix ${scripts.join(' and ')} letters ` +
      '(Latin, Greek and Cyrillic have letters that look alike, such as Latin "a" and Cyrillic "а")'
    );
  return undefined;
}
