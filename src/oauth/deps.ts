// What the OAuth endpoints and grants need, passed explicitly (no service locator).
import type { Db } from '../store/database.ts';
import type { WebDeps } from '../web/session.ts';

export interface OAuthDeps {
  db: Db;
  /** Unix seconds */
  now: () => number;
  /** PUBLIC_URL: the issuer, when it is not taken from each request */
  publicUrl: string | undefined;
}

/** What the consent page needs besides: the web session's rules (the consent form needs sudo mode). */
export interface ConsentPageDeps extends OAuthDeps {
  web: WebDeps;
}
