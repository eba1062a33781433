// Random secrets for codes, tokens and client credentials, their stored form, and the PKCE S256 check.
import { createHash, randomBytes, timingSafeEqual } from 'node:crypto';
import { hashTokenSecret } from '../auth/secret.ts';

/** 256 bits from the CSPRNG, base64url (43 characters). */
export const newOAuthSecret = (): string => randomBytes(32).toString('base64url');

/** A client id: 96 random bits as 24 hex characters (public, but unguessable ids keep the table tidy). */
export const newClientId = (): string => randomBytes(12).toString('hex');

/**
 * What is stored: SHA-256 hex, the same form as an API token's (a bearer secret is looked up by the same
 * hash). Every secret here is high-entropy, so no slow hash is needed.
 */
export const sha256Hex = hashTokenSecret;

/** RFC 7636 §4.1: 43–128 characters of [A-Z] / [a-z] / [0-9] / "-" / "." / "_" / "~". */
export const PKCE_VALUE = /^[A-Za-z0-9._~-]{43,128}$/;

/** RFC 7636 §4.6: BASE64URL-ENCODE(SHA256(ASCII(code_verifier))) compared with the stored challenge. */
export function verifyPkceS256(verifier: string, challenge: string): boolean {
  const computed = Buffer.from(createHash('sha256').update(verifier, 'ascii').digest('base64url'));
  const expected = Buffer.from(challenge);
  return computed.length === expected.length && timingSafeEqual(computed, expected);
}

/** Constant-time comparison of two hex digests. */
export function sameDigest(a: string, b: string): boolean {
  const x = Buffer.from(a);
  const y = Buffer.from(b);
  return x.length === y.length && timingSafeEqual(x, y);
}
