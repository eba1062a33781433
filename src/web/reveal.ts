// The secret of a token made on the token page, from the POST that makes it to the page it is shown on
// (after a 303), once. It never goes into a URL, a cookie of its own or a log. It waits in the database, so
// that whichever instance or worker serves the next request finds it, sealed (AES-256-GCM) under a key
// derived from the session's secret: that secret lives only in the browser's `rt` cookie (the database
// holds its hash), so the row is useless to anyone reading the database and to every other session, the
// same user's included. Reading it deletes it: a reload, a second tab or the back button finds nothing.
import { createCipheriv, createDecipheriv, hkdfSync, randomBytes } from 'node:crypto';
import type { FastifyRequest } from 'fastify';
import type { Db } from '../store/database.ts';
import { COOKIE_NAME } from '../http/credentials.ts';
import type { Session } from './session.ts';
import { upsert } from '../store/sql-dialect.ts';

/** How long a sealed secret waits for its page: the redirect takes a moment; a page opened later shows nothing. */
export const REVEAL_TTL_S = 600;

const NONCE_BYTES = 12;
const TAG_BYTES = 16;

/** Whose reveal this is: the session (its row id and the secret from its cookie). */
export interface RevealOwner {
  sessionId: number;
  sessionSecret: string;
}

/** The sealing key of one session: HKDF-SHA256 over the session's secret. */
const keyOf = (sessionSecret: string): Buffer =>
  Buffer.from(hkdfSync('sha256', sessionSecret, '', 'tokend token page: a new secret, shown once', 32));

/** Binds a sealed secret to its session and token: a row moved to another session or token does not open. */
const boundTo = (owner: RevealOwner, tokenId: number): Buffer =>
  Buffer.from(`session ${owner.sessionId} token ${tokenId}`);

/** Binds a sealed secret that is no token's (an application's) to its session and what it is the secret of. */
const boundToSubject = (owner: RevealOwner, subject: string): Buffer =>
  Buffer.from(`session ${owner.sessionId} secret of ${subject}`);

function seal(
  owner: RevealOwner,
  tokenId: number,
  secret: string,
  aad: Buffer = boundTo(owner, tokenId),
): string {
  const nonce = randomBytes(NONCE_BYTES);
  const cipher = createCipheriv('aes-256-gcm', keyOf(owner.sessionSecret), nonce);
  cipher.setAAD(aad);
  const sealed = Buffer.concat([nonce, cipher.update(secret, 'utf8'), cipher.final(), cipher.getAuthTag()]);
  return sealed.toString('base64url');
}

function open(
  owner: RevealOwner,
  tokenId: number,
  sealed: string,
  aad: Buffer = boundTo(owner, tokenId),
): string | undefined {
  const bytes = Buffer.from(sealed, 'base64url');
  if (bytes.length <= NONCE_BYTES + TAG_BYTES) return undefined;
  try {
    const decipher = createDecipheriv(
      'aes-256-gcm',
      keyOf(owner.sessionSecret),
      bytes.subarray(0, NONCE_BYTES),
    );
    decipher.setAAD(aad);
    decipher.setAuthTag(bytes.subarray(bytes.length - TAG_BYTES));
    const plain = Buffer.concat([
      decipher.update(bytes.subarray(NONCE_BYTES, bytes.length - TAG_BYTES)),
      decipher.final(),
    ]);
    return plain.toString('utf8');
  } catch {
    return undefined; // another session's key, or a changed row
  }
}

/**
 * Keeps `secret` of token `tokenId` for the session's next page, in place of any it kept before (one
 * upsert on the session's key: concurrent creations in other sessions take no lock in each other's way);
 * call it in the transaction that made the token. A reveal nobody came for goes with its session.
 */
export async function keepForReveal(
  db: Db,
  owner: RevealOwner,
  tokenId: number,
  secret: string,
  now: number,
): Promise<void> {
  const sealed = seal(owner, tokenId, secret);
  await upsert(
    db,
    'token_reveals',
    { session_id: owner.sessionId, token_id: tokenId, sealed, created_at: now },
    ['session_id'],
    { token_id: tokenId, sealed, created_at: now },
  );
}

/**
 * The secret kept for this session's token `tokenId`, once: the row is deleted as it is read, and only the
 * request whose delete removed it shows the secret. Undefined when there is none (already shown, too old,
 * another session's, or another token's).
 */
export async function takeReveal(
  db: Db,
  owner: RevealOwner,
  tokenId: number,
  now: number,
  aad?: Buffer,
): Promise<string | undefined> {
  const row = await db
    .selectFrom('token_reveals')
    .select(['sealed', 'created_at'])
    .where('session_id', '=', owner.sessionId)
    .where('token_id', '=', tokenId)
    .executeTakeFirst();
  if (!row) return undefined;
  const deleted = await db
    .deleteFrom('token_reveals')
    .where('session_id', '=', owner.sessionId)
    .where('token_id', '=', tokenId)
    .executeTakeFirst();
  if (Number(deleted.numDeletedRows) !== 1 || row.created_at <= now - REVEAL_TTL_S) return undefined;
  return open(owner, tokenId, row.sealed, aad);
}

/**
 * The same one showing for a secret that is no token's: an application's new client secret, from the POST
 * that made it to the application's page. It waits in the session's one reveal row, which then names the
 * session's own token (no API token ever has a session's id), sealed and bound to `subject` (e.g.
 * `application <id>`), so that it opens for that page alone.
 */
export async function keepSecretForPage(
  db: Db,
  owner: RevealOwner,
  subject: string,
  secret: string,
  now: number,
): Promise<void> {
  const sealed = seal(owner, owner.sessionId, secret, boundToSubject(owner, subject));
  await upsert(
    db,
    'token_reveals',
    { session_id: owner.sessionId, token_id: owner.sessionId, sealed, created_at: now },
    ['session_id'],
    { token_id: owner.sessionId, sealed, created_at: now },
  );
}

/** The secret kept for `subject` in this session, once (as takeReveal); undefined when there is none. */
export const takeSecretForPage = (
  db: Db,
  owner: RevealOwner,
  subject: string,
  now: number,
): Promise<string | undefined> => takeReveal(db, owner, owner.sessionId, now, boundToSubject(owner, subject));

/** The session a reveal belongs to: its row and the secret its cookie carries (which only the browser has). */
export const revealOwner = (request: FastifyRequest, user: Session): RevealOwner => ({
  sessionId: user.id,
  sessionSecret: String(request.cookies[COOKIE_NAME]),
});
