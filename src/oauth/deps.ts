// What the OAuth endpoints and grants need, passed explicitly (no service locator).
import type { Db, Dialect } from '../store/database.ts';
import type { WebDeps } from '../web/session.ts';

export interface OAuthDeps {
  db: Db;
  dialect: Dialect;
  /** Unix seconds */
  now: () => number;
  /** the web session's rules (the consent form needs sudo mode) */
  web: WebDeps;
  /** PUBLIC_URL: the issuer, when it is not taken from each request */
  publicUrl: string | undefined;
}
