// Table definitions: the source of every row type (Selectable<…>) in the repositories.
import type { Generated } from 'kysely';

export interface UserTable {
  id: Generated<number>;
  username: string;
  /** username lower-cased, trimmed, spaces turned into underscores; unique */
  username_safe: string;
  privileges: number;
  password_hash: string;
  password_version: number;
  created_at: number;
}

export interface TokenTable {
  id: Generated<number>;
  user_id: number;
  privileges: number;
  description: string;
  /** SHA-256 hex of the secret; the secret itself is never stored */
  token_hash: string;
  /** 1 for tokens made by the web login and the CLI; never listed */
  private: number;
  /** Unix seconds: creation, then latest use */
  last_updated: number;
  /** Unix seconds after which the token no longer authenticates; null: never expires */
  expires_at: number | null;
}

export interface Database {
  users: UserTable;
  tokens: TokenTable;
}
