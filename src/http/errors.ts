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
