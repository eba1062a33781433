// The browser session: the `rt` cookie holds a private token made by /login.
import type { FastifyReply, FastifyRequest } from 'fastify';
import { COOKIE_NAME } from '../http/credentials.ts';
import type { Db } from '../store/database.ts';
import { hashTokenSecret } from '../tokens/secret.ts';
import { nowSeconds } from '../tokens/service.ts';

export interface SessionUser {
  tokenId: number;
  userId: number;
  username: string;
  privileges: number;
}

/** The signed-in user of this browser, or undefined. One indexed query. */
export async function sessionUser(db: Db, request: FastifyRequest): Promise<SessionUser | undefined> {
  const secret = request.cookies[COOKIE_NAME];
  if (!secret) return undefined;
  const row = await db
    .selectFrom('tokens')
    .innerJoin('users', 'users.id', 'tokens.user_id')
    .select(['tokens.id as tokenId', 'users.id as userId', 'users.username', 'users.privileges'])
    .where('tokens.token_hash', '=', hashTokenSecret(secret))
    .where((eb) => eb.or([eb('tokens.expires_at', 'is', null), eb('tokens.expires_at', '>', nowSeconds())]))
    .executeTakeFirst();
  return row ? { ...row, privileges: Number(row.privileges) } : undefined;
}

const isHttps = (request: FastifyRequest): boolean => request.protocol === 'https';

export function setSessionCookie(
  request: FastifyRequest,
  reply: FastifyReply,
  secret: string,
  maxAgeS: number,
): void {
  reply.setCookie(COOKIE_NAME, secret, {
    maxAge: maxAgeS,
    path: '/',
    httpOnly: true,
    sameSite: 'lax',
    secure: isHttps(request),
  });
}

export function clearSessionCookie(request: FastifyRequest, reply: FastifyReply): void {
  reply.clearCookie(COOKIE_NAME, { path: '/', httpOnly: true, sameSite: 'lax', secure: isHttps(request) });
}

/** A CSRF token for this page's forms (its secret lives in the `_csrf` cookie). */
export const csrfToken = (request: FastifyRequest, reply: FastifyReply): string =>
  reply.generateCsrf({ secure: isHttps(request) });

/** `next` only ever leads to a path on this server: never another origin, scheme or `//host`. */
export function localPath(next: unknown): string | undefined {
  if (typeof next !== 'string' || next.length > 4096) return undefined;
  if (!next.startsWith('/') || next.startsWith('//')) return undefined;
  // Backslashes and control characters: browsers read some of them as a way to name another host.
  // eslint-disable-next-line no-control-regex
  if (/[\\\u0000-\u001f\u007f]/.test(next)) return undefined;
  const base = 'http://local.invalid';
  return new URL(next, base).origin === base ? next : undefined;
}
