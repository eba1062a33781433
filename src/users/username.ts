// Usernames: how they compare. Which new ones are allowed is src/users/username-rules.ts (loaded only by
// the commands that make users, never by `tokend serve`).

/**
 * The lookup key of a username: trimmed, in Unicode NFKC, case-folded, spaces and underscores made
 * equivalent. So `ａｌｉｃｅ` (fullwidth), `ALICE` and `alice` are one name, and so are `Straße` and
 * `STRASSE`. (Case folding is upper- then lower-casing, which folds `ß` to `ss` as full case folding
 * does; NFKC again after it, as NFKC_Casefold does.)
 */
export function usernameSafe(username: string): string {
  return username.trim().normalize('NFKC').toUpperCase().toLowerCase().normalize('NFKC').replaceAll(' ', '_');
}
