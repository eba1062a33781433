// passwordFingerprint (src/auth/secret.ts): what a web session remembers of the password it was opened with.
import { it } from 'node:test';
import assert from 'node:assert/strict';
import { createHash } from 'node:crypto';
import { passwordFingerprint } from '../../src/auth/secret.ts';

it('is the first 16 hex characters of the SHA-256 of the stored hash, and tells different hashes apart', () => {
  const stored = '$2b$10$abcdefghijklmnopqrstuuLc3Qe3rV0Jm6o7b0yW2nY1yq3m8r1Tq';
  const full = createHash('sha256').update(stored).digest('hex');
  assert.equal(passwordFingerprint(stored), full.slice(0, 16));
  assert.match(passwordFingerprint(stored), /^[0-9a-f]{16}$/);
  assert.notEqual(passwordFingerprint(stored), passwordFingerprint(`${stored}x`));
});
