// One error handler decides what callers see: a 4xx explains itself; a 5xx never shows its inside.
import type { FastifyError, FastifyReply, FastifyRequest } from 'fastify';
import { INTERNAL_ERROR_MESSAGE, sendEnvelope } from './envelope.ts';

/** An expected refusal with the code and message to send. */
export class HttpError extends Error {
  readonly statusCode: number;
  constructor(statusCode: number, message: string) {
    super(message);
    this.statusCode = statusCode;
  }
}

function clientMessage(err: FastifyError, limit: number): string {
  if (err.validation) return `Invalid ${err.validationContext ?? 'request'}: ${err.message}`;
  switch (err.code) {
    case 'FST_ERR_CTP_BODY_TOO_LARGE':
      return `The request body is too large (at most ${limit} bytes).`;
    case 'FST_ERR_CTP_INVALID_MEDIA_TYPE':
      return 'Unsupported Content-Type: send the body as application/json.';
    case 'FST_ERR_CTP_EMPTY_JSON_BODY':
      return 'The body is empty; send a JSON object.';
    case 'FST_ERR_CTP_INVALID_JSON_BODY':
    case 'FST_ERR_CTP_INVALID_CONTENT_LENGTH':
      return `Bad JSON: ${err.message}`;
  }
  if (err instanceof SyntaxError || err.name === 'SyntaxError') return `Bad JSON: ${err.message}`;
  return err.message;
}

export function makeErrorHandler(bodyLimit: number) {
  return function handleError(err: FastifyError, request: FastifyRequest, reply: FastifyReply) {
    const status = err.statusCode ?? 500;
    if (status >= 500 || status < 400) {
      request.log.error({ err }, 'request failed');
      return sendEnvelope(reply, 500, INTERNAL_ERROR_MESSAGE);
    }
    if (err.validation || err instanceof SyntaxError)
      return sendEnvelope(reply, 400, clientMessage(err, bodyLimit));
    return sendEnvelope(reply, status, clientMessage(err, bodyLimit));
  };
}

export function notFound(_request: FastifyRequest, reply: FastifyReply) {
  reply.header('X-Real-404', 'yes');
  return sendEnvelope(reply, 404, 'No such endpoint.');
}

/**
 * The not-found handler of {base_url}: a path that has routes for other methods is a 405 envelope whose
 * Allow header lists them (found by Fastify's router, so `/v1/tokens/:id` matches `/v1/tokens/7`); any
 * other path is the 404 of notFound. `methods` holds every method a route under {base_url} was declared
 * with (HEAD among them where Fastify adds it for a GET), filled in as the routes are added.
 */
export function apiNotFound(methods: ReadonlySet<string>) {
  return function apiNotFoundHandler(request: FastifyRequest, reply: FastifyReply) {
    const allowed = [...methods]
      .filter((method) => request.server.findRoute({ method, url: request.url }) !== null)
      .sort();
    // (a route that sends its own not-found answer is not a wrong method)
    if (allowed.length === 0 || allowed.includes(request.method)) return notFound(request, reply);
    reply.header('Allow', allowed.join(', '));
    return sendEnvelope(
      reply,
      405,
      `This endpoint does not take ${request.method}; it takes ${allowed.join(', ')}.`,
    );
  };
}
