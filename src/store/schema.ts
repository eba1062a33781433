// Table definitions: the source of every row type (Selectable<…>) in the repositories. The types are what
// the rows hold on every backend: each driver gives integers (BIGINT and counts included) as numbers
// (src/store/drivers/*.ts; in place the family's text `user` as a number too, src/store/ripple.ts), so
// callers never convert a row's values. test/store/row-types.test.ts holds every backend to it.
import type { ColumnType, Generated } from 'kysely';

/** Largest id a user or token can have: ids are 32-bit signed integer columns in every dialect. */
export const MAX_ID = 2_147_483_647;

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
  /** 1 for a web session (made by the web sign-in; private, no privileges); 0 for every API token */
  session: Generated<number>;
  /** Unix seconds when a web session last had its password entered (sudo mode); null otherwise */
  password_at: number | null;
  /** Unix seconds when the token was made; null for tokens made before tokend recorded it */
  created_at: number | null;
  /** the canonical client address of the latest use written (src/auth/last-used.ts); null: none yet */
  last_address: ColumnType<string | null, string | null | undefined, string | null>;
  /**
   * a web session's passwordFingerprint (src/auth/secret.ts) of the password it was opened with; null for
   * API tokens and for sessions opened before tokend recorded it
   */
  password_fingerprint: ColumnType<string | null, string | null | undefined, string | null>;
}

/** One event of the security log (src/auth/security-log.ts, docs/security-log.md). */
export interface SecurityLogTable {
  id: Generated<number>;
  /** Unix seconds */
  at: number;
  user_id: number;
  kind: string;
  /** how: api, web, oauth, cli, import, expiry */
  means: string;
  /** what acted: the API token's id, the web session's id, the application's client id; null for the rest */
  means_id: string | null;
  token_id: number | null;
  client_id: string | null;
  /** why or how, in a word or a few (a failed sign-in's reason, a revocation's cause) */
  detail: string | null;
  address: string | null;
  user_agent: string | null;
  /**
   * the account whose credential acted (an API token's or a web session's owner); null outside a request,
   * for an application, or before it was recorded. Another account than `user_id`: an administrator acted.
   */
  actor_id: ColumnType<number | null, number | null | undefined, number | null>;
  /** a summary row's count of the events it stands for (failed sign-ins beyond the bound); null: one event */
  repeats: ColumnType<number | null, number | null | undefined, number | null>;
}

/**
 * An event waiting to be published on the events channel (src/auth/event-outbox.ts): written in the
 * transaction of the change it announces, deleted once published.
 */
export interface EventOutboxTable {
  /** the event's id, given from event_outbox_state's sequence in commit order; also in `message` */
  id: number;
  /** Unix seconds: when it was written */
  created_at: number;
  /** the published JSON, as sent */
  message: string;
}

/** The outbox's two counters: `sequence` (the last event id given) and `drain` (who publishes, until when). */
export interface EventOutboxStateTable {
  name: string;
  /** sequence: the last id given; drain: the lease's end (ms since the epoch), 0 when free */
  value: number;
  /** drain: the process holding the lease; null when free */
  holder: string | null;
}

/** A new token's secret, sealed with its session's key, until the token page shows it once (src/web/reveal.ts). */
export interface TokenRevealTable {
  /** the web session (a tokens row) that made the token; one reveal per session */
  session_id: number;
  token_id: number;
  /** base64url of the AES-256-GCM nonce, ciphertext and tag */
  sealed: string;
  created_at: number;
}

/** A registered OAuth 2.0 client (a third-party app). */
export interface OAuthClientTable {
  /** public identifier, random */
  id: string;
  name: string;
  owner_id: number;
  avatar: string;
  /** JSON array of the exact redirect URIs allowed */
  redirect_uris: string;
  /** SHA-256 hex of the client secret; null for a public client (which must use PKCE) */
  secret_hash: string | null;
  created_at: number;
  /**
   * SHA-256 hex of the name as names compare (src/oauth/clients.ts `clientNameKey`): unique per owner.
   * Null only for a row written by something else (an import from before migration 0016).
   */
  name_key: string | null;
}

/** An authorization code: single use, short-lived, bound to client, redirect URI and PKCE challenge. */
export interface OAuthCodeTable {
  /** SHA-256 hex of the code; also the id of the token family the code starts */
  code_hash: string;
  client_id: string;
  user_id: number;
  redirect_uri: string;
  scope: string;
  /** BASE64URL(SHA-256(code_verifier)); only S256 is accepted */
  code_challenge: string;
  expires_at: number;
  /** 1 once exchanged */
  used: number;
  /** how many exchanges reached its proof checks (at most CODE_ATTEMPTS_MAX, src/oauth/issue.ts) */
  attempts: number;
  created_at: number;
  /** OpenID Connect: the authorization request's nonce, for the id_token; null when it sent none */
  nonce: ColumnType<string | null, string | null | undefined, string | null>;
  /** OpenID Connect: when the user signed in (the web session's sign-in), Unix seconds; null: unknown */
  auth_time: ColumnType<number | null, number | null | undefined, number | null>;
}

/** The columns access and refresh tokens share. */
interface OAuthTokenColumns {
  id: Generated<number>;
  token_hash: string;
  client_id: string;
  scope: string;
  /** the grant this token descends from (code hash, or a random id for minted tokens) */
  family: string;
  created_at: number;
  expires_at: number;
}

/**
 * Bearer access tokens issued to clients. A token of the client credentials grant belongs to no user
 * (user_id NULL): it acts for its application alone.
 */
export interface OAuthAccessTokenTable extends OAuthTokenColumns {
  user_id: number | null;
}

/** Refresh tokens: the access token's columns (always for a user), plus whether it was rotated. */
export interface OAuthRefreshTokenTable extends OAuthTokenColumns {
  user_id: number;
  /** 1 once rotated; presenting a used one again revokes its family */
  used: number;
  /** OpenID Connect: when the user signed in for the grant (Unix seconds), for a refresh's id_token */
  auth_time: ColumnType<number | null, number | null | undefined, number | null>;
}

/** A key that signs OpenID Connect id_tokens (src/oauth/signing-keys.ts). */
export interface OAuthSigningKeyTable {
  /** the key id (the JWK's `kid`): its RFC 7638 thumbprint */
  kid: string;
  /** 1 for the first key, one more for each rotation: unique, so two instances never make two at once */
  generation: number;
  /** the JWS algorithm, RS256 */
  alg: string;
  /** the public JWK, JSON: what the JWKS publishes */
  public_jwk: string;
  /** the private JWK, JSON; sealed with SIGNING_KEY_SECRET (AES-256-GCM) where one is set */
  private_jwk: string;
  created_at: number;
  /** Unix seconds from which it signs (published before that); it signs until the next generation's */
  active_from: number;
}

/** A device authorization (RFC 8628): its code, its user code, and what the user decided. */
export interface OAuthDeviceCodeTable {
  /** SHA-256 hex of the device code; also the id of the grant family it starts */
  device_code_hash: string;
  /** SHA-256 hex of the user code as compared (upper case, no dash) */
  user_code_hash: string;
  client_id: string;
  scope: string;
  /** pending, approved, denied, or used (its tokens issued) */
  status: string;
  /** who approved or denied it; null while pending */
  user_id: number | null;
  /** when the approving user signed in (Unix seconds), for the id_token */
  auth_time: number | null;
  /** seconds the device must wait between polls (raised by slow_down) */
  interval_s: number;
  /** Unix seconds of the last poll; null: not polled yet */
  polled_at: number | null;
  created_at: number;
  expires_at: number;
}

/** The scopes a user has approved for a client, so the consent page is not shown twice. */
export interface OAuthConsentTable {
  user_id: number;
  client_id: string;
  scope: string;
  updated_at: number;
}

/** The tokens tokend import-ripple brought over, kept after the token is deleted. */
export interface RippleImportedTokenTable {
  id: number;
  /** the token's legacy hash as imported (`md5:` and the MD5 hex of its secret) */
  token_hash: string;
}

export interface Database {
  users: UserTable;
  tokens: TokenTable;
  oauth_clients: OAuthClientTable;
  oauth_codes: OAuthCodeTable;
  oauth_access_tokens: OAuthAccessTokenTable;
  oauth_refresh_tokens: OAuthRefreshTokenTable;
  oauth_consents: OAuthConsentTable;
  oauth_signing_keys: OAuthSigningKeyTable;
  oauth_device_codes: OAuthDeviceCodeTable;
  ripple_imported_tokens: RippleImportedTokenTable;
  token_reveals: TokenRevealTable;
  security_log: SecurityLogTable;
  event_outbox: EventOutboxTable;
  event_outbox_state: EventOutboxStateTable;
}
