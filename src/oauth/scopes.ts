// The OAuth scopes (read_confidential, write, bancho), the token privileges each carries, and how the consent page words them.
import { TOKEN_PRIVILEGE_DESCRIPTIONS as SAYS, TokenPrivilege } from '../auth/privileges.ts';
import { InvalidScope } from './errors.ts';

export interface ScopeInfo {
  privileges: number;
  /** what the consent page says the app may do, in plain words: everything the scope allows (its privilege's) */
  description: string;
}

export const SCOPES: Readonly<Record<string, ScopeInfo>> = {
  read_confidential: {
    privileges: TokenPrivilege.ReadConfidential,
    description: SAYS.ReadConfidential.full,
  },
  write: { privileges: TokenPrivilege.Write, description: SAYS.Write.full },
  bancho: { privileges: TokenPrivilege.Bancho, description: SAYS.Bancho.full },
};

export const SCOPE_NAMES: readonly string[] = Object.keys(SCOPES);

/** An RFC 6749 §3.3 scope string as a sorted, de-duplicated list; unknown scopes are refused. */
export function parseScope(raw: string | undefined): string[] {
  const names = (raw ?? '').split(' ').filter((s) => s !== '');
  const unknown = names.filter((n) => !Object.hasOwn(SCOPES, n));
  if (unknown.length > 0)
    throw new InvalidScope(
      `Unknown scope ${unknown.map((n) => JSON.stringify(n)).join(', ')}; known scopes: ${SCOPE_NAMES.join(', ')}.`,
    );
  return [...new Set(names)].sort();
}

export const formatScope = (scopes: readonly string[]): string => [...scopes].sort().join(' ');

/** The token privileges a scope string carries (before limiting them to the owner's privileges). */
export function scopePrivileges(scope: string): number {
  let bits = 0;
  for (const name of scope.split(' ')) {
    const info = Object.hasOwn(SCOPES, name) ? SCOPES[name] : undefined;
    if (info) bits |= info.privileges;
  }
  return bits;
}

/** True when every scope in `requested` is in `granted`. */
export const scopeCovers = (granted: readonly string[], requested: readonly string[]): boolean =>
  requested.every((s) => granted.includes(s));
