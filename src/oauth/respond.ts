// How the back-channel endpoints answer: JSON that no cache keeps (RFC 6749 §5.1), errors in §5.2 form.
import type { FastifyError, FastifyReply, FastifyRequest } from 'fastify';
import { InvalidRequest, OAuthError, ServerError, SlowDown, errorBody } from './errors.ts';

export function noStore(reply: FastifyReply): FastifyReply {
  return reply.header('Cache-Control', 'no-store').header('Pragma', 'no-cache');
}

/** Any failure as an OAuthError: a Fastify 4xx (bad encoding, too large) is the client's invalid_request. */
export function asOAuthError(err: unknown): OAuthError {
  if (err instanceof OAuthError) return err;
  const status = (err as FastifyError | undefined)?.statusCode;
  if (status !== undefined && status >= 400 && status < 500)
    return new InvalidRequest((err as Error).message || 'Malformed request.');
  return new ServerError('internal error');
}

/** The error handler of the token, revocation and introspection endpoints. */
export function sendOAuthError(err: unknown, request: FastifyRequest, reply: FastifyReply) {
  const oauthError = asOAuthError(err);
  if (oauthError.status >= 500) request.log.error({ err }, 'OAuth endpoint failed');
  // RFC 6749 §5.2: a 401 names the authentication scheme the client may use.
  if (oauthError.status === 401) reply.header('WWW-Authenticate', 'Basic realm="tokend"');
  if (oauthError instanceof SlowDown) reply.header('Retry-After', String(oauthError.retryAfterS));
  return noStore(reply).code(oauthError.status).send(errorBody(oauthError));
}
