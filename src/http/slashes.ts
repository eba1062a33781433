// Doubled slashes in a request's path are one, as the Ripple family's API reads them: a client whose base
// URL ends in `/` sends `/api/v1//tokens`, and nginx with no URI in `proxy_pass` passes `//api/v1/...` on.
// The request target is rewritten before routing (Fastify's rewriteUrl), so the router, the not-found and
// 405 answers, the pages and the logs all see the one path; the router's own ignoreDuplicateSlashes would
// leave the doubled path in request.url and in the not-found router, which does not read that option.

/**
 * The request target with each run of slashes in its path made one; the query string is left as it is
 * (a `?token=` credential or a `next=//…` value keeps its slashes). A target that is not a path (an
 * absolute URL, `*`) is left alone.
 */
export function collapseSlashes(target: string): string {
  if (!target.startsWith('/')) return target;
  const queryAt = target.indexOf('?');
  const path = queryAt === -1 ? target : target.slice(0, queryAt);
  if (!path.includes('//')) return target;
  return path.replace(/\/{2,}/g, '/') + (queryAt === -1 ? '' : target.slice(queryAt));
}
