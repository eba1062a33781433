// The OAuth scopes: the privilege scopes (read_confidential, write, bancho), the token privileges each carries
// and how the consent page words them; OpenID Connect's `openid` and `profile`, which carry no privilege
// (every application learns who the user is: the consent page says so); and OpenID Connect's standard
// scopes tokend has no data for, which are granted fewer than asked (RFC 6749 §3.3) instead of refused.
import { TOKEN_PRIVILEGE_DESCRIPTIONS as SAYS, TokenPrivilege } from '../auth/privileges.ts';
import { scopeNames } from '../auth/scope.ts';
import { InvalidScope } from './errors.ts';

export interface ScopeInfo {
  privileges: number;
  /**
   * what the consent page says the app may do, in plain words: everything the scope allows (its
   * privilege's); undefined for the identity scopes, which the page's first line ("who you are") covers
   */
  description: string | undefined;
}

export const SCOPES: Readonly<Record<string, ScopeInfo>> = {
  read_confidential: {
    privileges: TokenPrivilege.ReadConfidential,
    description: SAYS.ReadConfidential.full,
  },
  write: { privileges: TokenPrivilege.Write, description: SAYS.Write.full },
  bancho: { privileges: TokenPrivilege.Bancho, description: SAYS.Bancho.full },
  // OpenID Connect: an id_token and userinfo naming the user (src/oauth/oidc.ts)
  openid: { privileges: 0, description: undefined },
  // OpenID Connect: the username as preferred_username
  profile: { privileges: 0, description: undefined },
};

/**
 * OpenID Connect's standard scopes that tokend has no data for (it keeps no email address, postal
 * address or phone number) and `offline_access` (every grant has a refresh token anyway). Libraries ask
 * for some by default (`openid profile email`): they are left out of what is granted, and the token
 * response's `scope` says what was.
 */
export const SCOPES_WITHOUT_DATA: readonly string[] = ['email', 'address', 'phone', 'offline_access'];

/** The scopes the consent page has nothing more to say about than who the user is. */
export const IDENTITY_SCOPES: readonly string[] = ['openid', 'profile'];

export const SCOPE_NAMES: readonly string[] = Object.keys(SCOPES);

/**
 * An RFC 6749 §3.3 scope string as a sorted, de-duplicated list; unknown scopes are refused. With
 * `grantable`, an authorization request's: SCOPES_WITHOUT_DATA are dropped first (granted fewer than asked).
 */
export function parseScope(raw: string | undefined, options: { grantable?: boolean } = {}): string[] {
  const names = (raw ?? '')
    .split(' ')
    .filter((s) => s !== '' && !(options.grantable === true && SCOPES_WITHOUT_DATA.includes(s)));
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
  for (const name of scopeNames(scope)) {
    const info = Object.hasOwn(SCOPES, name) ? SCOPES[name] : undefined;
    if (info) bits |= info.privileges;
  }
  return bits;
}

/** True when every scope in `requested` is in `granted`. */
export const scopeCovers = (granted: readonly string[], requested: readonly string[]): boolean =>
  requested.every((s) => granted.includes(s));
