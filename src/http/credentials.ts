// The one credential reader: the first present of header X-Ripple-Token, Authorization: Bearer,
// query token, query k, cookie rt (the cookie never for JSONP requests).
import type { FastifyRequest } from 'fastify';
import { firstValue } from './first-value.ts';

export type CredentialSource = 'x-ripple-token' | 'bearer' | 'query-token' | 'query-k' | 'cookie';
export interface Credential {
  value: string;
  source: CredentialSource;
}

export const COOKIE_NAME = 'rt';

/** The first of a repeated header or query value, as the API reads every such value; '' counts as absent. */
const first = (v: unknown): string | undefined => firstValue(v) || undefined;

/** The `rt` cookie: the web session's credential, which the pages read only here too. */
export const readSessionCookie = (request: FastifyRequest): string | undefined =>
  first(request.cookies?.[COOKIE_NAME]);

export function readCredential(request: FastifyRequest): Credential | undefined {
  const header = first(request.headers['x-ripple-token']);
  if (header) return { value: header, source: 'x-ripple-token' };
  const auth = request.headers.authorization;
  if (auth && /^bearer /i.test(auth)) {
    const value = auth.slice(7).trim();
    if (value) return { value, source: 'bearer' };
  }
  const query = request.query as Record<string, unknown> | undefined;
  const fromToken = first(query?.token);
  if (fromToken) return { value: fromToken, source: 'query-token' };
  const fromK = first(query?.k);
  if (fromK) return { value: fromK, source: 'query-k' };
  // A script tag on another site could otherwise read a signed-in user's data through JSONP.
  if (query?.callback === undefined) {
    const cookie = readSessionCookie(request);
    if (cookie) return { value: cookie, source: 'cookie' };
  }
  return undefined;
}
