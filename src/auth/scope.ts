// A granted scope as stored (the OAuth tables' `scope` column, an approval's, a bearer identity's): the
// space-separated names of RFC 6749 §3.3, checked when granted and never again. Every reader of one goes
// through here; oauth/scopes.ts parses what a client asks for, and writes the stored form (formatScope).

/** The names of a stored scope string, in its order (an empty string has none). */
export const scopeNames = (scope: string): string[] => scope.split(' ').filter((name) => name !== '');

/** Whether a stored scope string grants `name`. */
export const scopeGrants = (scope: string, name: string): boolean => scopeNames(scope).includes(name);
