// What the OAuth endpoints and grants need, passed explicitly (no service locator).
import type { OAuthGrantBounds } from '../config.ts';
import type { CredentialCore } from '../auth/credentials.ts';
import type { Db } from '../store/database.ts';
import type { WebDeps } from '../web/session.ts';
import type { TokenLimits } from './token-limits.ts';
import type { EventSink } from '../auth/security-log.ts';
import type { SigningKeys } from './signing-keys.ts';

export interface OAuthDeps {
  db: Db;
  /** Unix seconds */
  now: () => number;
  /** PUBLIC_URL: the issuer, when it is not taken from each request */
  publicUrl: string | undefined;
  /** OAUTH_GRANTS_PER_CLIENT_MAX, OAUTH_GRANTS_PER_USER_MAX */
  grants: OAuthGrantBounds;
  /** finds a live access token (introspection, revocation) */
  credentials: Pick<CredentialCore, 'bearer'>;
  /** where the security log publishes an ended grant (Services.events) */
  events: EventSink;
  /** the keys that sign id_tokens (Services.signingKeys) */
  keys: SigningKeys;
}

/** What the token endpoint and its grants need besides: the token endpoint's rate limits. */
export interface TokenEndpointDeps extends OAuthDeps {
  limits: Pick<TokenLimits, 'admit' | 'admitApplication'>;
}

/** What the consent page needs besides: the web session's rules (the consent form needs sudo mode). */
export interface ConsentPageDeps extends OAuthDeps {
  web: WebDeps;
}
