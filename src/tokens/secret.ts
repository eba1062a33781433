import { createHash, randomBytes } from 'node:crypto';

/** 32 lower-case hex characters: 128 bits from the CSPRNG. */
export const newTokenSecret = (): string => randomBytes(16).toString('hex');

/** What is stored and looked up: SHA-256 hex of the secret. */
export const hashTokenSecret = (secret: string): string =>
  createHash('sha256').update(secret, 'utf8').digest('hex');
