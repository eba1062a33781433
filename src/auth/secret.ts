import { hash, randomBytes } from 'node:crypto';

/** 32 lower-case hex characters: 128 bits from the CSPRNG. */
export const newTokenSecret = (): string => randomBytes(16).toString('hex');

/**
 * What is stored and looked up: SHA-256 hex of the secret (UTF-8). crypto.hash is the one-shot form:
 * no Hash object per request, less CPU per request (bench/HISTORY.md).
 */
export const hashTokenSecret = (secret: string): string => hash('sha256', secret, 'hex');

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
 * A short fingerprint of a user's stored password hash: the first 16 hex characters of its SHA-256 hex. A
 * web session keeps the one of the password it was opened with (tokens.password_fingerprint); the session
 * ends when the owner's stored hash no longer gives it, whoever changed the password (tokend, or another
 * program writing the users table). It is no secret worth more than the hash it comes from: whoever can
 * read the session's row can read the user's row, and the hash itself, just as well.
 */
export const passwordFingerprint = (storedPasswordHash: string): string =>
  hash('sha256', storedPasswordHash, 'hex').slice(0, 16);
