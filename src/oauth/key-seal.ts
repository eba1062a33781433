// The private halves of the signing keys at rest: sealed with AES-256-GCM under a key derived (HKDF-SHA256)
// from SIGNING_KEY_SECRET, the key's id bound in as associated data (a sealed key copied to another row
// does not open). SIGNING_KEY_SECRET may hold several secrets, separated by spaces: the first seals, every
// one opens, so the secret can be changed without a moment when a key cannot be opened. Without a secret,
// keys are stored as plain JSON (the database's own protection is then all they have).
import { createCipheriv, createDecipheriv, hkdfSync, randomBytes } from 'node:crypto';

const PREFIX = 'aes256gcm:';
const IV_BYTES = 12;
const TAG_BYTES = 16;

const derive = (secret: string): Buffer =>
  Buffer.from(hkdfSync('sha256', secret, 'tokend', 'tokend signing keys at rest', 32));

export class KeySeal {
  private readonly keys: Buffer[];

  constructor(secrets: readonly string[]) {
    this.keys = secrets.map(derive);
  }

  get sealing(): boolean {
    return this.keys.length > 0;
  }

  /** The stored form of a private key: sealed with the first secret, or plain without one. */
  seal(kid: string, plaintext: string): string {
    const key = this.keys[0];
    if (key === undefined) return plaintext;
    const iv = randomBytes(IV_BYTES);
    const cipher = createCipheriv('aes-256-gcm', key, iv).setAAD(Buffer.from(kid));
    const body = Buffer.concat([cipher.update(plaintext, 'utf8'), cipher.final()]);
    return PREFIX + Buffer.concat([iv, body, cipher.getAuthTag()]).toString('base64url');
  }

  /** The index of the secret that opens `stored` (-1: stored plain); throws when none does. */
  private opener(kid: string, stored: string): { index: number; plaintext: string } {
    if (!stored.startsWith(PREFIX)) return { index: -1, plaintext: stored };
    if (this.keys.length === 0)
      throw new SigningKeySealError(
        'the signing keys in the database are encrypted: set SIGNING_KEY_SECRET to the secret they were stored with',
      );
    const raw = Buffer.from(stored.slice(PREFIX.length), 'base64url');
    const iv = raw.subarray(0, IV_BYTES);
    const tag = raw.subarray(raw.length - TAG_BYTES);
    const body = raw.subarray(IV_BYTES, raw.length - TAG_BYTES);
    for (const [index, key] of this.keys.entries()) {
      try {
        const decipher = createDecipheriv('aes-256-gcm', key, iv).setAAD(Buffer.from(kid));
        decipher.setAuthTag(tag);
        return {
          index,
          plaintext: Buffer.concat([decipher.update(body), decipher.final()]).toString('utf8'),
        };
      } catch {
        // not this secret
      }
    }
    throw new SigningKeySealError(
      `SIGNING_KEY_SECRET does not open signing key ${kid}: it was stored with another secret (keep the old one in SIGNING_KEY_SECRET after the new, separated by a space)`,
    );
  }

  /** The private key's JSON. */
  open(kid: string, stored: string): string {
    return this.opener(kid, stored).plaintext;
  }

  /** The stored form sealed with the first secret, when it is not already; undefined otherwise. */
  reseal(kid: string, stored: string): string | undefined {
    const { index, plaintext } = this.opener(kid, stored);
    if (index === 0 || (index === -1 && !this.sealing)) return undefined;
    return this.seal(kid, plaintext);
  }
}

/** Whether a stored private key is sealed (not plain). */
export const isSealed = (stored: string): boolean => stored.startsWith(PREFIX);

/** The stored keys cannot be opened with SIGNING_KEY_SECRET as set. */
export class SigningKeySealError extends Error {
  override readonly name = 'SigningKeySealError';
}
