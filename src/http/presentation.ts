// How envelopes leave the v1 API: pls200 forces HTTP 200; a valid JSONP callback wraps the body. A
// redirect is left as it is.
// A synchronous onSend hook: most answers carry neither, and leave untouched at no cost.
import type { FastifyReply, FastifyRequest } from 'fastify';

const JSONP_CALLBACK = /^[a-zA-Z_$][a-zA-Z0-9_$]*$/;

export const isValidCallback = (v: unknown): v is string =>
  typeof v === 'string' && v.length < 100 && JSONP_CALLBACK.test(v);

export function presentEnvelope(
  request: FastifyRequest,
  reply: FastifyReply,
  payload: unknown,
  done: (err: Error | null, payload?: unknown) => void,
): void {
  const query = request.query as Record<string, unknown> | undefined;
  // A redirect (a path in other letters, as the family's router answers it) carries no envelope: pls200
  // and callback leave it a redirect.
  if (query === undefined || (reply.statusCode >= 300 && reply.statusCode < 400)) return done(null, payload);
  if (query.pls200 !== undefined) reply.code(200);
  if (isValidCallback(query.callback) && typeof payload === 'string') {
    reply.header('content-type', 'application/javascript; charset=utf-8');
    // JSONP answers are loaded by script tags on other sites, including sites that require CORP.
    reply.header('cross-origin-resource-policy', 'cross-origin');
    // /**/ keeps a callback name from being read as something else at the start of the script
    return done(null, `/**/${query.callback}(${payload});`);
  }
  done(null, payload);
}
