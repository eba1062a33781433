import { hash, randomBytes } from 'node:crypto';
import type { StoreLayout } from '../store/database.ts';

/** 32 lower-case hex characters: 128 bits from the CSPRNG. */
export const newTokenSecret = (): string => randomBytes(16).toString('hex');

/**
 * What is stored and looked up: SHA-256 hex of the secret (UTF-8). crypto.hash is the one-shot form:
 * no Hash object per request, less CPU per request (bench/HISTORY.md).
 */
export const hashTokenSecret = (secret: string): string => hash('sha256', secret, 'hex');

/** Length of a stored SHA-256 hex hash: no MD5 hex (32) is this long. */
export const SHA256_HEX_LENGTH = 64;

/**
 * The prefix of a stored hash in the Ripple family's scheme (MD5 hex of the secret), kept only for tokens
 * brought over by `tokend import-ripple`. Such a hash is replaced by the SHA-256 one on the token's first
 * use (see tokenLookup); tokend never stores a new token this way.
 */
export const LEGACY_HASH_PREFIX = 'md5:';

/** The stored form of a token imported with the MD5 hex of its secret. */
export const legacyHashOfMd5 = (md5Hex: string): string => `${LEGACY_HASH_PREFIX}${md5Hex.toLowerCase()}`;

/** The legacy stored form a secret would have: `md5:` and the MD5 hex of the secret (UTF-8). */
export const legacyTokenHash = (secret: string): string => legacyHashOfMd5(familyTokenHash(secret));

/**
 * How a Ripple-family database stores a token (the family's own, in place: DATABASE_SCHEMA=ripple): the MD5
 * hex of the secret (UTF-8), lower case.
 */
export const familyTokenHash = (secret: string): string => hash('md5', secret, 'hex');

/**
 * How a new API token's secret is stored, the one rule (mintToken asks it; no caller picks a hash, and
 * mintSession stores every web session as SHA-256). In place on a Ripple-family database
 * (DATABASE_SCHEMA=ripple) a public API token is stored as the family stores its tokens, the MD5 hex of
 * the secret (familyTokenHash), so that the family's own API, which looks a token up by that form, accepts
 * it on every other endpoint of the server. The secret is 128 bits from the CSPRNG: no dictionary reaches
 * it, so its MD5 is no weaker than its SHA-256 against a stolen database. Everything else is stored as the
 * SHA-256 hex (hashTokenSecret), which the family never matches: a web session and a private token, because
 * the family gives any private row of its table every privilege but Bancho its owner may hold, and every
 * token of tokend's own database.
 */
export function storedSecretHash(
  layout: StoreLayout,
  credential: { private: boolean },
): (secret: string) => string {
  return layout.familyTokens && !credential.private ? familyTokenHash : hashTokenSecret;
}

/**
 * A short fingerprint of a user's stored password hash: the first 16 hex characters of its SHA-256 hex. A
 * web session keeps the one of the password it was opened with (tokens.password_fingerprint); the session
 * ends when the owner's stored hash no longer gives it, whoever changed the password (tokend, or another
 * program writing the users table). It is no secret worth more than the hash it comes from: whoever can
 * read the session's row can read the user's row, and the hash itself, just as well.
 */
export const passwordFingerprint = (storedPasswordHash: string): string =>
  hash('sha256', storedPasswordHash, 'hex').slice(0, 16);
