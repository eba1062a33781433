// What the OAuth endpoints and grants need, passed explicitly (no service locator).
import type { Db, Dialect } from '../store/database.ts';

export interface OAuthDeps {
  db: Db;
  dialect: Dialect;
  /** Unix seconds */
  now: () => number;
}
