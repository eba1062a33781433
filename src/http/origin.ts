// This server's origin, and whether a request was sent by one of this server's own pages.
import type { FastifyRequest } from 'fastify';

/** PUBLIC_URL when set; otherwise the scheme and host the request reached (TRUST_PROXY decides whose word counts). */
export function serverOrigin(request: FastifyRequest, publicUrl: string | undefined): string {
  if (publicUrl !== undefined) return publicUrl;
  try {
    return new URL(`${request.protocol}://${request.host}`).origin;
  } catch {
    return 'null';
  }
}

const originOf = (value: string): string | undefined => {
  try {
    return new URL(value).origin;
  } catch {
    return undefined;
  }
};

/**
 * True when the request says it comes from a page of `origin`: its Origin header names it or, without an
 * Origin header, its Referer is on it. A request that says neither is not from this server's pages.
 */
export function sentFromOrigin(request: FastifyRequest, origin: string): boolean {
  const declared = request.headers.origin;
  if (typeof declared === 'string') return declared !== 'null' && originOf(declared) === origin;
  const referer = request.headers.referer;
  return typeof referer === 'string' && originOf(referer) === origin;
}
