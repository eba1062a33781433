// A request's path as the Ripple family's API reads it (its HTTP server normalises every path): doubled
// slashes are one (a client whose base URL ends in `/` sends `/api/v1//tokens`, and nginx with no URI in
// `proxy_pass` passes `//api/v1/...` on), and the dot segments `.` and `..` are resolved
// (`/api/v1/tokens/./self` is `/api/v1/tokens/self`). The request target is rewritten before routing
// (Fastify's rewriteUrl), so the router, the not-found and 405 answers, the pages and the logs all see the
// one path; the router's own ignoreDuplicateSlashes would leave the doubled path in request.url and in
// the not-found router, which does not read that option.

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

/**
 * A path with its dot segments resolved (RFC 3986, 5.2.4): `.` is dropped, `..` drops the segment before
 * it, never going above the root; a path ending in one ends in `/`. Other paths are returned as they are.
 */
export function removeDotSegments(path: string): string {
  if (!/\/\.\.?(?:\/|$)/.test(path)) return path;
  const out: string[] = [];
  const segments = path.split('/').slice(1);
  segments.forEach((segment, i) => {
    const last = i === segments.length - 1;
    if (segment === '.' || segment === '..') {
      if (segment === '..' && out.length > 0) out.pop();
      if (last) out.push('');
    } else out.push(segment);
  });
  return `/${out.join('/')}`;
}

/**
 * The request target as the family reads it: slashes collapsed, then dot segments resolved; the query
 * string as it came.
 */
export function normalizeTarget(target: string): string {
  const collapsed = collapseSlashes(target);
  if (!collapsed.startsWith('/')) return collapsed;
  const queryAt = collapsed.indexOf('?');
  const path = queryAt === -1 ? collapsed : collapsed.slice(0, queryAt);
  const resolved = removeDotSegments(path);
  return resolved === path ? collapsed : resolved + (queryAt === -1 ? '' : collapsed.slice(queryAt));
}
