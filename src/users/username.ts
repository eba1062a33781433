/** The lookup key of a username: trimmed, lower-cased, spaces and underscores made equivalent. */
export function usernameSafe(username: string): string {
  return username.trim().toLowerCase().replaceAll(' ', '_');
}
